package data

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"slices"
	"time"

	"uhno/internal/atomicfile"
)

// Stats are per-field normalisation statistics: the mean and the
// population standard deviation (divisor N) of every value the training
// pairs contain, field by field (a field is one physical channel; an input
// field stacked over H frames shares one mean and std). They are computed
// from the training split only, so nothing of the test set leaks into
// training.
//
// The values counted for a field are its frames that appear in some
// training pair: inputs frames 0..P+H-2, targets frames H..P+H-1 (their
// union when a field is both), frame 0 for static data; over every grid
// point after the stride, over every training trajectory. A constant
// input (Sampling.Constants) is a field of its own, named by its channel
// (ConstantChannel), counted once per training trajectory.
type Stats struct {
	Fields []string  `json:"fields"`
	Mean   []float64 `json:"mean"`
	Std    []float64 `json:"std"`
	Count  []int64   `json:"count"`
}

// minStd is the floor below which a field counts as constant: its std is
// then stored as 1, so normalisation only removes the mean instead of
// amplifying round-off.
const minStd = 1e-12

// ComputeStats computes Stats of the plan's resident fields over the
// training trajectories, reading one trajectory at a time. Each
// trajectory's mean and sum of squared deviations are taken in float64 in
// two passes and merged with Chan et al.'s pairwise update, so the result
// is accurate even when the mean dwarfs the spread (density ~ 1).
func ComputeStats(p *Plan, train []int) (Stats, error) {
	if len(train) == 0 {
		return Stats{}, fmt.Errorf("data: %s: statistics need at least one training trajectory", p.d.path)
	}
	nf := len(p.union)
	pts := p.d.Points()
	lo := make([]int, nf)
	hi := make([]int, nf)
	for u, f := range p.union {
		in, out := slices.Contains(p.inputs, f), slices.Contains(p.outputs, f)
		switch {
		case p.static:
			lo[u], hi[u] = 0, 1
		case in && out:
			lo[u], hi[u] = 0, p.pairs+p.history
		case in:
			lo[u], hi[u] = 0, p.pairs+p.history-1
		default:
			lo[u], hi[u] = p.history, p.pairs+p.history
		}
	}
	acc := make([]moments, nf+len(p.consts))
	block := make([]float32, p.ResidentLen())
	tail := p.Span() * nf * pts
	for _, i := range train {
		if err := p.ReadResident(block, i); err != nil {
			return Stats{}, err
		}
		for u := range nf {
			var segs [][]float32
			for f := lo[u]; f < hi[u]; f++ {
				o := (f*nf + u) * pts
				segs = append(segs, block[o:o+pts])
			}
			acc[u].add(segs)
		}
		for j := range p.consts {
			acc[nf+j].add([][]float32{block[tail+j*pts : tail+(j+1)*pts]})
		}
	}
	s := Stats{Fields: p.statFields()}
	for _, a := range acc {
		std := math.Sqrt(a.m2 / a.count)
		if std < minStd {
			std = 1
		}
		s.Mean = append(s.Mean, a.mean)
		s.Std = append(s.Std, std)
		s.Count = append(s.Count, int64(a.count))
	}
	return s, nil
}

// moments are the count, mean and sum of squared deviations (M2) of the
// values seen so far.
type moments struct{ count, mean, m2 float64 }

// add merges the values of segs: their own mean and M2 in two passes,
// then Chan, Golub & LeVeque's update of (count, mean, M2) of two parts.
func (m *moments) add(segs [][]float32) {
	var sum, nb float64
	for _, seg := range segs {
		for _, v := range seg {
			sum += float64(v)
		}
		nb += float64(len(seg))
	}
	mb := sum / nb
	var ss float64
	for _, seg := range segs {
		for _, v := range seg {
			d := float64(v) - mb
			ss += d * d
		}
	}
	na := m.count
	n := na + nb
	delta := mb - m.mean
	m.mean += delta * nb / n
	m.m2 += ss + delta*delta*na*nb/n
	m.count = n
}

// statFields are the fields Stats of plan p cover: the resident fields,
// then each constant input's channel.
func (p *Plan) statFields() []string {
	f := slices.Clone(p.union)
	for _, c := range p.consts {
		f = append(f, ConstantChannel(c))
	}
	return f
}

// index returns the position of each channel's field in s.Fields, -1 for
// a coordinate channel (IsCoordinate: left as it is, already in [0, 1]).
func (s *Stats) index(channels []string) []int {
	idx := make([]int, len(channels))
	for c, f := range channels {
		idx[c] = slices.Index(s.Fields, f)
		if idx[c] < 0 && IsCoordinate(f) {
			continue
		}
		if idx[c] < 0 {
			panic(fmt.Sprintf("data: Stats of %v used for field %q", s.Fields, f))
		}
	}
	return idx
}

// Normalize maps x, laid out [batch, len(channels), points] with channel c
// holding field channels[c], to (x - mean) / std in place.
func (s *Stats) Normalize(x []float32, channels []string, points int) {
	idx := s.index(channels)
	block := len(channels) * points
	for b := 0; b < len(x); b += block {
		for c, f := range idx {
			if f < 0 {
				continue // a coordinate channel
			}
			m, inv := s.Mean[f], 1/s.Std[f]
			seg := x[b+c*points : b+(c+1)*points]
			for j, v := range seg {
				seg[j] = float32((float64(v) - m) * inv)
			}
		}
	}
}

// Denormalize inverts Normalize in place: x*std + mean.
func (s *Stats) Denormalize(x []float32, channels []string, points int) {
	idx := s.index(channels)
	block := len(channels) * points
	for b := 0; b < len(x); b += block {
		for c, f := range idx {
			if f < 0 {
				continue // a coordinate channel
			}
			m, sd := s.Mean[f], s.Std[f]
			seg := x[b+c*points : b+(c+1)*points]
			for j, v := range seg {
				seg[j] = float32(float64(v)*sd + m)
			}
		}
	}
}

// StatsPath is where statistics are stored next to a data file: the
// sidecar "<file>.stats.json".
func StatsPath(dataPath string) string { return dataPath + ".stats.json" }

// statsFormat versions the sidecar.
const statsFormat = "uhno-stats/1"

// sidecar is the JSON file: several entries, one per (file version, split,
// sampling, stride), so different seeds or horizons do not overwrite each
// other.
type sidecar struct {
	Format  string       `json:"format"`
	Entries []statsEntry `json:"entries"`
}

// statsEntry is one set of statistics with what it was computed from.
type statsEntry struct {
	Key      string   `json:"key"`
	File     string   `json:"file"`
	Size     int64    `json:"size"`
	ModTime  string   `json:"mod_time"`
	Train    int      `json:"train_trajectories"`
	TrainSHA string   `json:"train_sha256"`
	Inputs   []string `json:"inputs"`
	Outputs  []string `json:"outputs"`
	History  int      `json:"history"`
	Pairs    int      `json:"pairs_per_trajectory"`
	Stride   int      `json:"stride"`
	// Constants are the constant inputs (none: absent, so the keys of
	// entries made before they existed stay the same).
	Constants []string `json:"constants,omitempty"`
	Stats
}

// maxEntries bounds the sidecar; the oldest entries go first.
const maxEntries = 32

// entryFor describes the statistics of plan p over train for the current
// version of the data file (its size and modification time: a regenerated
// file gets new statistics).
func entryFor(p *Plan, train []int) (statsEntry, error) {
	st, err := os.Stat(p.d.path)
	if err != nil {
		return statsEntry{}, fmt.Errorf("data: %w", err)
	}
	tb, _ := json.Marshal(train)
	th := sha256.Sum256(tb)
	e := statsEntry{
		File: st.Name(), Size: st.Size(), ModTime: st.ModTime().UTC().Format(time.RFC3339Nano),
		Train: len(train), TrainSHA: hex.EncodeToString(th[:]),
		Inputs: p.inputs, Outputs: p.outputs, History: p.history, Pairs: p.pairs, Stride: p.d.stride, Constants: p.consts,
	}
	kb, _ := json.Marshal(e)
	kh := sha256.Sum256(kb)
	e.Key = hex.EncodeToString(kh[:])
	return e, nil
}

// LoadOrComputeStats returns the training statistics of plan p over the
// training trajectories, from the sidecar file when it holds an entry for
// exactly this file version, split and sampling (cached true), otherwise
// computed with ComputeStats and added to the sidecar (written to a
// temporary name and renamed). An empty sidecar path computes without
// storing. A sidecar that cannot be written is an error: pass another path
// (for example in the cache directory) when the data directory is
// read-only.
func LoadOrComputeStats(p *Plan, train []int, sidecarPath string) (s Stats, cached bool, err error) {
	if sidecarPath == "" {
		s, err = ComputeStats(p, train)
		return s, false, err
	}
	want, sc, found, err := lookupStats(p, train, sidecarPath)
	if err != nil || found != nil {
		if found != nil {
			return *found, true, nil
		}
		return Stats{}, false, err
	}
	if s, err = ComputeStats(p, train); err != nil {
		return Stats{}, false, err
	}
	want.Stats = s
	sc.Format = statsFormat
	sc.Entries = slices.DeleteFunc(sc.Entries, func(e statsEntry) bool { return e.Key == want.Key })
	sc.Entries = append(sc.Entries, want)
	if len(sc.Entries) > maxEntries {
		sc.Entries = sc.Entries[len(sc.Entries)-maxEntries:]
	}
	out, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		return Stats{}, false, fmt.Errorf("data: encoding statistics: %v", err)
	}
	if err := atomicfile.WriteFile(sidecarPath, append(out, '\n'), 0o644); err != nil {
		return Stats{}, false, fmt.Errorf("data: statistics: %w", err)
	}
	return s, false, nil
}

// CachedStats returns the statistics of plan p over train stored in the
// sidecar at sidecarPath, or ok false when the sidecar is absent or holds
// no entry for exactly this file version, split and sampling. It never
// computes nor writes anything: commands that open a finished run look up
// statistics an older uhno cached without leaving files behind.
func CachedStats(p *Plan, train []int, sidecarPath string) (s Stats, ok bool, err error) {
	_, _, found, err := lookupStats(p, train, sidecarPath)
	if err != nil || found == nil {
		return Stats{}, false, err
	}
	return *found, true, nil
}

// lookupStats reads the sidecar at path (absent: empty) and returns the
// entry plan p over train would have, the sidecar as read, and the stored
// statistics when an entry matches.
func lookupStats(p *Plan, train []int, path string) (want statsEntry, sc sidecar, found *Stats, err error) {
	if want, err = entryFor(p, train); err != nil {
		return want, sc, nil, err
	}
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		if json.Unmarshal(raw, &sc) != nil || sc.Format != statsFormat {
			sc = sidecar{} // unreadable or another version: rebuilt by the caller
		}
	case !errors.Is(err, fs.ErrNotExist):
		return want, sc, nil, fmt.Errorf("data: reading statistics %s: %v", path, err)
	}
	for _, e := range sc.Entries {
		if e.Key == want.Key && len(e.Mean) == len(e.Fields) && len(e.Std) == len(e.Fields) && slices.Equal(e.Fields, p.statFields()) {
			st := e.Stats
			return want, sc, &st, nil
		}
	}
	return want, sc, nil, nil
}

// Check reports whether s normalises the resident fields of plan p: the
// same field names in the same order, with one finite mean and one
// positive standard deviation each. Statistics recorded in a checkpoint
// are checked with it before they are used on the data file.
func (s *Stats) Check(p *Plan) error {
	if want := p.statFields(); !slices.Equal(s.Fields, want) || len(s.Mean) != len(s.Fields) || len(s.Std) != len(s.Fields) {
		return fmt.Errorf("data: statistics of fields %v (%d means, %d standard deviations), the data %s has fields %v",
			s.Fields, len(s.Mean), len(s.Std), p.d.path, want)
	}
	for i := range s.Fields {
		if math.IsNaN(s.Mean[i]) || math.IsInf(s.Mean[i], 0) || !(s.Std[i] > 0) || math.IsInf(s.Std[i], 0) {
			return fmt.Errorf("data: statistics of field %s: mean %v, std %v; want a finite mean and a positive std", s.Fields[i], s.Mean[i], s.Std[i])
		}
	}
	return nil
}
