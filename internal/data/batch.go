package data

import (
	"container/list"
	"fmt"
	"math/rand/v2"
	"slices"
)

// DefaultResidentBytes is the memory the batcher may spend on cached
// trajectories when BatchOptions leaves both limits unset. 1 GiB holds every
// training trajectory of the paper's 1D tasks (1000 x 51 frames x 128 x 4 B
// = 26 MB), 2D tasks (800 x 20 frames x 64^2 x 4 B = 262 MB) and Darcy (800 x
// 2 fields x 64^2 x 4 B = 26 MB), so those are read from disk once; and one
// 3D CFD trajectory at 128^3 (21 frames x 5 fields x 8 MiB = 880 MB), or
// nine at 64^3.
const DefaultResidentBytes = 1 << 30

// BatchOptions configure a Batcher.
type BatchOptions struct {
	// Batch is the number of pairs per batch.
	Batch int
	// Seed fixes the order: the same seed, data and options give the same
	// batches, bit for bit.
	Seed uint64
	// Resident caps the trajectories held in memory. 0 derives it from
	// MaxBytes.
	Resident int
	// MaxBytes caps the memory of the cached trajectories when Resident is
	// 0 (0: DefaultResidentBytes). At least one trajectory is always held.
	MaxBytes int64
	// Stats, when not nil, normalises inputs and targets.
	Stats *Stats
	// Shards and Shard split every batch for data-parallel training:
	// with Shards > 1 the batcher walks the stream of Batch-pair batches
	// exactly as an unsplit one, and Next returns only the Shard-th of
	// Shards equal, consecutive parts of each (Batch/Shards pairs), so the
	// shards of ranks 0..Shards-1 concatenated are the unsplit batch.
	// Batch must be a multiple of Shards. 0 or 1: whole batches.
	Shards, Shard int
}

// share returns the pairs [lo, hi) of each batch that this batcher
// returns.
func (o BatchOptions) share() (lo, hi int) {
	if o.Shards <= 1 {
		return 0, o.Batch
	}
	n := o.Batch / o.Shards
	return o.Shard * n, (o.Shard + 1) * n
}

// batchStream separates the batcher's random stream from other uses of
// the seed.
const batchStream = 0xba7c_0000_0000_0000

// Batcher yields shuffled batches of training pairs, streaming from the
// file. Each epoch it draws a permutation of the training trajectories
// (from the seed and the epoch number), walks it in groups of R resident
// trajectories, and emits the group's pairs in a shuffled order before
// moving on; batches run on across group and epoch boundaries, so every
// batch is full and every pair appears exactly once per epoch. When R
// covers the whole training set (the default for every task but 3D CFD)
// this is a uniform shuffle of all pairs and the file is read once; for
// larger sets each trajectory is read once per epoch and a batch mixes
// pairs of at most R trajectories.
//
// Memory: at most R decoded trajectories (an LRU of their first
// Plan.Span() frames), plus the caller's batch buffers. A Batcher is not
// safe for concurrent use.
type Batcher struct {
	plan  *Plan
	trajs []int
	opt   BatchOptions
	cap   int

	cache *lru

	epoch int
	rng   *rand.Rand
	perm  []int  // this epoch's trajectory order
	group int    // next group to load
	queue []Pair // the current group's shuffled pairs
	pos   int

	drawn []Pair
	reads int // trajectories read from the file, for tests
}

// NewBatcher prepares batches of plan's pairs over the trajectories trajs
// (the training split).
func NewBatcher(p *Plan, trajs []int, opt BatchOptions) (*Batcher, error) {
	if len(trajs) == 0 {
		return nil, fmt.Errorf("data: %s: no training trajectories to batch", p.d.path)
	}
	for _, i := range trajs {
		if i < 0 || i >= p.d.n {
			return nil, fmt.Errorf("data: %s: trajectory %d outside the file's %d", p.d.path, i, p.d.n)
		}
	}
	if opt.Batch < 1 {
		return nil, fmt.Errorf("data: batch size %d, want >= 1", opt.Batch)
	}
	if opt.Shards > 1 && (opt.Batch%opt.Shards != 0 || opt.Shard < 0 || opt.Shard >= opt.Shards) {
		return nil, fmt.Errorf("data: shard %d of %d of a batch of %d: want 0 <= shard < shards and the batch a multiple of shards", opt.Shard, opt.Shards, opt.Batch)
	}
	if opt.Stats != nil {
		for _, f := range p.statFields() {
			if !slices.Contains(opt.Stats.Fields, f) {
				return nil, fmt.Errorf("data: %s: statistics cover %v, not field %q", p.d.path, opt.Stats.Fields, f)
			}
		}
	}
	capacity := opt.Resident
	if capacity <= 0 {
		budget := opt.MaxBytes
		if budget <= 0 {
			budget = DefaultResidentBytes
		}
		capacity = int(budget / (4 * int64(p.ResidentLen())))
	}
	capacity = min(max(capacity, 1), len(trajs))
	b := &Batcher{plan: p, trajs: slices.Clone(trajs), opt: opt, cap: capacity, cache: newLRU(capacity)}
	b.startEpoch(0)
	return b, nil
}

// Resident returns R, the most trajectories held in memory.
func (b *Batcher) Resident() int { return b.cap }

// Epoch returns the current epoch (0-based): the one the next pair comes
// from.
func (b *Batcher) Epoch() int { return b.epoch }

// PairsPerEpoch returns the number of training pairs.
func (b *Batcher) PairsPerEpoch() int { return len(b.trajs) * b.plan.pairs }

// InputShape and TargetShape are the shapes of one batch (of this
// batcher's shard of it, BatchOptions.Shards).
func (b *Batcher) InputShape() []int {
	lo, hi := b.opt.share()
	return b.plan.InputShape(hi - lo)
}
func (b *Batcher) TargetShape() []int {
	lo, hi := b.opt.share()
	return b.plan.TargetShape(hi - lo)
}

func (b *Batcher) startEpoch(e int) {
	b.epoch = e
	b.rng = rand.New(rand.NewPCG(b.opt.Seed, batchStream^uint64(e)))
	b.perm = slices.Clone(b.trajs)
	b.rng.Shuffle(len(b.perm), func(i, j int) { b.perm[i], b.perm[j] = b.perm[j], b.perm[i] })
	b.group = 0
	b.queue = b.queue[:0]
	b.pos = 0
}

// advanceGroup moves to the next group of trajectories and shuffles its
// pairs into the queue, reading nothing; it returns the group.
func (b *Batcher) advanceGroup() []int {
	if b.group*b.cap >= len(b.perm) {
		b.startEpoch(b.epoch + 1)
	}
	lo := b.group * b.cap
	g := b.perm[lo:min(lo+b.cap, len(b.perm))]
	b.group++
	b.queue = b.plan.Pairs(g)
	b.rng.Shuffle(len(b.queue), func(i, j int) { b.queue[i], b.queue[j] = b.queue[j], b.queue[i] })
	b.pos = 0
	return g
}

// Skip moves past n batches without reading or copying their pairs: the
// batches after it are those a batcher that drew the n batches would give
// (the order depends only on the seed and the number of pairs drawn; only
// which trajectories are cached differs). Resuming a run uses it instead
// of replaying the data order.
func (b *Batcher) Skip(n int) error {
	if n < 0 {
		return fmt.Errorf("data: Skip(%d): want n >= 0", n)
	}
	for left := n * b.opt.Batch; left > 0; {
		if b.pos == len(b.queue) {
			b.advanceGroup()
		}
		k := min(left, len(b.queue)-b.pos)
		b.pos += k
		left -= k
	}
	return nil
}

// load returns trajectory i's resident block, reading it on a miss.
func (b *Batcher) load(i int) ([]float32, error) {
	if blk := b.cache.get(i); blk != nil {
		return blk, nil
	}
	blk := b.cache.spare()
	if blk == nil {
		blk = make([]float32, b.plan.ResidentLen())
	}
	if err := b.plan.ReadResident(blk, i); err != nil {
		return nil, err
	}
	b.reads++
	b.cache.put(i, blk)
	return blk, nil
}

// Next fills in ([Batch, H*C_in, grid...]) and tgt ([Batch, C_out,
// grid...]) with the next batch and returns its pairs (valid until the
// next call). A trajectory is read when a batch first needs it, not when
// its group starts: the group's reads are spread over its batches (each
// trajectory still read once per group, as the cache holds the group), so
// the first batch of a run does not wait for the whole training set (1000
// trajectories of 1D Burgers, about 0.8 s), and a Prefetcher hides the
// later reads behind the steps. Batches never end: the stream runs on over epochs. With
// Shards > 1 the batch axis is Batch/Shards: the stream moves by a whole
// batch, and only this shard's pairs are read and returned.
func (b *Batcher) Next(in, tgt []float32) ([]Pair, error) {
	p := b.plan
	pts := p.d.Points()
	inLen := p.inChannels() * pts
	tgtLen := len(p.outputs) * pts
	lo, hi := b.opt.share()
	if len(in) != (hi-lo)*inLen || len(tgt) != (hi-lo)*tgtLen {
		panic(fmt.Sprintf("data: Next: buffers of %d and %d values, want %d and %d", len(in), len(tgt), (hi-lo)*inLen, (hi-lo)*tgtLen))
	}
	b.drawn = b.drawn[:0]
	for s := range b.opt.Batch {
		if b.pos == len(b.queue) {
			b.advanceGroup()
		}
		pr := b.queue[b.pos]
		b.pos++
		if s < lo || s >= hi {
			continue
		}
		blk, err := b.load(pr.Traj)
		if err != nil {
			return nil, err
		}
		k := s - lo
		p.PairFrom(blk, pr.Start, in[k*inLen:(k+1)*inLen], tgt[k*tgtLen:(k+1)*tgtLen])
		b.drawn = append(b.drawn, pr)
	}
	if b.opt.Stats != nil {
		b.opt.Stats.Normalize(in, p.InputChannels(), pts)
		b.opt.Stats.Normalize(tgt, p.TargetChannels(), pts)
	}
	return b.drawn, nil
}

// lru caches decoded trajectory blocks, evicting the least recently used
// beyond its capacity; an evicted block's memory is reused by the next
// load.
type lru struct {
	capacity int
	order    *list.List            // front: most recent; values are *lruItem
	items    map[int]*list.Element // trajectory -> element
}

type lruItem struct {
	traj  int
	block []float32
}

func newLRU(capacity int) *lru {
	return &lru{capacity: capacity, order: list.New(), items: map[int]*list.Element{}}
}

func (c *lru) get(i int) []float32 {
	e, ok := c.items[i]
	if !ok {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*lruItem).block
}

// spare returns the block of the entry put will evict, removing it, or nil
// while the cache has room.
func (c *lru) spare() []float32 {
	if c.order.Len() < c.capacity {
		return nil
	}
	e := c.order.Back()
	it := e.Value.(*lruItem)
	c.order.Remove(e)
	delete(c.items, it.traj)
	return it.block
}

func (c *lru) put(i int, block []float32) {
	if c.order.Len() >= c.capacity {
		c.spare()
	}
	c.items[i] = c.order.PushFront(&lruItem{traj: i, block: block})
}

func (c *lru) len() int { return c.order.Len() }
