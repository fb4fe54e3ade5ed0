package cpu

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortTopK is topKInto as it was before selection: the threshold from a
// full sort of a copy. The reference of TestTopKSelectMatchesSort.
func sortTopK(mask, scores []float32, k int) {
	scratch := slices.Clone(scores)
	slices.Sort(scratch)
	clear(mask)
	keepTopK(mask, scores, k, scratch[len(scores)-k])
}

// scoreSets are inputs for the selection: distinct values, heavy ties,
// signed zeros, NaNs, sorted and reversed runs (a bad case for naive
// pivots), all equal.
func scoreSets(r *rand.Rand, n int) map[string][]float32 {
	out := map[string][]float32{}
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	out["normal"] = slices.Clone(v)
	for i := range v {
		v[i] = float32(r.IntN(4))
	}
	out["ties"] = slices.Clone(v)
	for i := range v {
		switch r.IntN(5) {
		case 0:
			v[i] = float32(math.NaN())
		case 1:
			v[i] = float32(math.Copysign(0, -1))
		case 2:
			v[i] = 0
		default:
			v[i] = float32(r.IntN(3) - 1)
		}
	}
	out["nan and zeros"] = slices.Clone(v)
	for i := range v {
		v[i] = float32(i)
	}
	out["sorted"] = slices.Clone(v)
	slices.Reverse(v)
	out["reversed"] = slices.Clone(v)
	for i := range v {
		v[i] = 2.5
	}
	out["equal"] = slices.Clone(v)
	return out
}

// TestSelectNth: the value selectNth finds at index i is the value
// slices.Sort puts there (NaN for NaN), for every i of small inputs and
// sampled i of large ones.
func TestSelectNth(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 2, 3, 17, 18, 100, 4096} {
		for name, v := range scoreSets(r, n) {
			sorted := slices.Clone(v)
			slices.Sort(sorted)
			for i := 0; i < n; i += max(1, n/97) {
				got := selectNth(slices.Clone(v), i)
				if want := sorted[i]; got != want && !(got != got && want != want) {
					t.Fatalf("%s, n %d: index %d is %g, sorting gives %g", name, n, i, got, want)
				}
			}
		}
	}
}

// TestTopKSelectMatchesSort: the masks of topKInto (selection) equal the
// masks of the full sort it replaced, bit for bit, for every k of small
// inputs and sampled k of large ones.
func TestTopKSelectMatchesSort(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, n := range []int{1, 5, 33, 4096} {
		for name, v := range scoreSets(r, n) {
			got, want, scratch := make([]float32, n), make([]float32, n), make([]float32, n)
			for k := 1; k <= n; k += max(1, n/61) {
				topKInto(got, v, k, scratch)
				sortTopK(want, v, k)
				if !slices.Equal(got, want) {
					t.Fatalf("%s, n %d, k %d: selection's mask differs from the sort's", name, n, k)
				}
			}
		}
	}
}

// BenchmarkTopK times one sample's top-k mask at NS-2D's 64x64, by
// selection (topKInto) and by the full sort it replaced.
func BenchmarkTopK(b *testing.B) {
	r := rand.New(rand.NewPCG(15, 16))
	v := scoreSets(r, 4096)["normal"]
	mask, scratch := make([]float32, 4096), make([]float32, 4096)
	b.Run("select", func(b *testing.B) {
		for b.Loop() {
			topKInto(mask, v, 1229, scratch)
		}
	})
	b.Run("sort", func(b *testing.B) {
		for b.Loop() {
			sortTopK(mask, v, 1229)
		}
	})
}
