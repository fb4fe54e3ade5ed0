package train

import (
	"fmt"
	"math/rand/v2"

	"uhno/internal/data"
	"uhno/internal/tensor"
)

// batcherStream adapts data.Batcher to Batches.
type batcherStream struct{ b *data.Batcher }

// FromBatcher returns the training stream of a data.Batcher. Its order is
// a pure function of the batcher's seed and the number of batches drawn,
// which is what resuming relies on.
func FromBatcher(b *data.Batcher) Batches { return batcherStream{b} }

func (s batcherStream) Next(in, tgt []float32) error {
	_, err := s.b.Next(in, tgt)
	return err
}

// Skip implements Skipper: resuming moves past the drawn batches without
// reading them.
func (s batcherStream) Skip(n int) error { return s.b.Skip(n) }

func (s batcherStream) InputShape() []int  { return s.b.InputShape() }
func (s batcherStream) TargetShape() []int { return s.b.TargetShape() }

// valStream separates the validation sample from other uses of the seed.
const valStream = 0x7a1_0000_0000

// NewValSet draws a fixed validation set of up to `pairs` pairs from the
// held-out trajectories trajs: all their pairs in a PCG-shuffled order
// (seeded by seed), the first `pairs` of them, read one by one from the file
// (Plan.ReadPair: only the frames of each pair), normalised by stats when
// given, in batches of `batch` (the last may be smaller). The set is the
// same for the same arguments, so validation losses compare across runs.
func NewValSet(p *data.Plan, trajs []int, stats *data.Stats, pairs, batch int, seed uint64) (*ValSet, error) {
	if batch < 1 || pairs < 1 {
		return nil, fmt.Errorf("train: validation set of %d pairs in batches of %d, want both >= 1", pairs, batch)
	}
	all := p.Pairs(trajs)
	if len(all) == 0 {
		return nil, fmt.Errorf("train: no held-out trajectories for validation")
	}
	rng := rand.New(rand.NewPCG(seed, valStream))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	all = all[:min(pairs, len(all))]

	inShape, tgtShape := p.InputShape(1), p.TargetShape(1)
	inLen, tgtLen := tensor.Numel(inShape), tensor.Numel(tgtShape)
	pts := p.Dataset().Points()
	vs := &ValSet{}
	for lo := 0; lo < len(all); lo += batch {
		group := all[lo:min(lo+batch, len(all))]
		vb := ValBatch{
			In: make([]float32, len(group)*inLen), Tgt: make([]float32, len(group)*tgtLen),
			InShape: p.InputShape(len(group)), TgtShape: p.TargetShape(len(group)),
		}
		for k, pr := range group {
			if err := p.ReadPair(pr, vb.In[k*inLen:(k+1)*inLen], vb.Tgt[k*tgtLen:(k+1)*tgtLen]); err != nil {
				return nil, fmt.Errorf("train: validation pair (trajectory %d, start %d): %w", pr.Traj, pr.Start, err)
			}
		}
		if stats != nil {
			stats.Normalize(vb.In, p.InputChannels(), pts)
			stats.Normalize(vb.Tgt, p.TargetChannels(), pts)
		}
		vs.Batches = append(vs.Batches, vb)
	}
	return vs, nil
}
