package data

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/data/h5/h5test"
)

// tensorFile writes a "tensor" [n, nt, nx] file of Code values.
func tensorFile(t *testing.T, n, nt, nx int) fixture {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tensor.hdf5")
	ds := []h5test.Dataset{{Name: "tensor", Dims: []int{n, nt, nx}, Data: h5test.Field(0, n, nt, []int{nx})}}
	if err := h5test.Write(p, ds, nil); err != nil {
		t.Fatal(err)
	}
	return fixture{p, n, nt, []int{nx}}
}

// TestPairCounts checks the pairs per trajectory of the paper's settings
// (Tab. dataset-config) and the refusals.
func TestPairCounts(t *testing.T) {
	oneD := tensorFile(t, 2, 51, 4)
	twoD := tensorFile(t, 2, 50, 4)
	cfd := cfdFixture(t, 2, 21, 2)
	darcy := darcyFixture(t, 2, 4)
	tests := []struct {
		name      string
		fx        fixture
		s         Sampling
		pairs     int
		span      int
		in, out   []int // InputShape(1), TargetShape(1)
		wantError string
	}{
		{"1D: 51 frames, H=1, all windows", oneD, Sampling{History: 1}, 50, 51, []int{1, 1, 4}, []int{1, 1, 4}, ""},
		{"1D: config P=50", oneD, Sampling{History: 1, Pairs: 50}, 50, 51, []int{1, 1, 4}, []int{1, 1, 4}, ""},
		{"2D: 50 frames, H=10, all windows", twoD, Sampling{History: 10}, 40, 50, []int{1, 10, 4}, []int{1, 1, 4}, ""},
		{"2D: config P=10 (FNO protocol)", twoD, Sampling{History: 10, Pairs: 10}, 10, 20, []int{1, 10, 4}, []int{1, 1, 4}, ""},
		{"3D: 21 frames, H=1, P=20", cfd, Sampling{History: 1, Pairs: 20}, 20, 21, []int{1, 5, 2, 2, 2}, []int{1, 5, 2, 2, 2}, ""},
		{"Darcy: a -> u", darcy, Sampling{}, 1, 1, []int{1, 1, 4, 4}, []int{1, 1, 4, 4}, ""},
		{"too many pairs", twoD, Sampling{History: 10, Pairs: 41}, 0, 0, nil, nil, "41 pairs per trajectory, want 1..40 (frames 50 - history 10)"},
		{"history too long", oneD, Sampling{History: 51}, 0, 0, nil, nil, "history 51 leaves no target among 51 frames"},
		{"Darcy history", darcy, Sampling{History: 2}, 0, 0, nil, nil, "static data (1 frame per sample) gives one pair of history 1"},
		{"unknown field", cfd, Sampling{Inputs: []string{"energy"}}, 0, 0, nil, nil, `no field "energy"`},
		{"field twice", cfd, Sampling{Outputs: []string{"Vx", "Vx"}}, 0, 0, nil, nil, `field "Vx" (dataset "Vx") listed twice`},
		{"config names, Darcy", darcy, Sampling{Inputs: []string{"a"}, Outputs: []string{"u"}}, 1, 1, []int{1, 1, 4, 4}, []int{1, 1, 4, 4}, ""},
		{"config names, 2D", twoD, Sampling{Inputs: []string{"vorticity"}, Outputs: []string{"vorticity"}, History: 10, Pairs: 10}, 10, 20, []int{1, 10, 4}, []int{1, 1, 4}, ""},
		{"Darcy unknown", darcy, Sampling{Inputs: []string{"k"}}, 0, 0, nil, nil, `no field "k"; the 2D Darcy (nu [b, x, y], tensor [b, 1, x, y]) layout has [nu tensor]`},
		{"Darcy with coordinates", darcy, Sampling{Coordinates: true}, 1, 1, []int{1, 3, 4, 4}, []int{1, 1, 4, 4}, ""},
		{"coordinates on a time series: after the H frames", twoD, Sampling{History: 10, Coordinates: true}, 40, 50, []int{1, 11, 4}, []int{1, 1, 4}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Open(tc.fx.path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			p, err := d.Plan(tc.s)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) || !strings.Contains(err.Error(), tc.fx.path) {
					t.Fatalf("got %v, want an error naming the file and %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.PairsPerTrajectory() != tc.pairs || p.Span() != tc.span {
				t.Errorf("pairs %d, span %d; want %d, %d", p.PairsPerTrajectory(), p.Span(), tc.pairs, tc.span)
			}
			if got := len(p.Pairs([]int{0, 1})); got != 2*tc.pairs {
				t.Errorf("Pairs of 2 trajectories: %d, want %d", got, 2*tc.pairs)
			}
			if !slices.Equal(p.InputShape(1), tc.in) || !slices.Equal(p.TargetShape(1), tc.out) {
				t.Errorf("shapes %v -> %v, want %v -> %v", p.InputShape(1), p.TargetShape(1), tc.in, tc.out)
			}
		})
	}
}

// TestPairFrames checks that each pair holds the right frames: inputs
// k..k+H-1 of the pair's trajectory in order, target k+H (Darcy: nu ->
// tensor of the same sample), through ReadPair (one window from the file)
// and PairFrom (the batcher's resident block) alike.
func TestPairFrames(t *testing.T) {
	oneD := burgersFixture(t, 3, 9, 8)
	cfd := cfdFixture(t, 2, 4, 4)
	darcy := darcyFixture(t, 3, 4)
	tests := []struct {
		name   string
		fx     fixture
		stride int
		s      Sampling
		inVars []int // variable code of each input field
		outVar []int
	}{
		{"1D H=3", oneD, 2, Sampling{History: 3}, []int{0}, []int{0}},
		{"3D H=1 five channels", cfd, 2, Sampling{History: 1}, []int{0, 1, 2, 3, 4}, []int{0, 1, 2, 3, 4}},
		{"3D H=2 pressure,Vz -> density", cfd, 1, Sampling{History: 2, Inputs: []string{"pressure", "Vz"}, Outputs: []string{"density"}}, []int{1, 4}, []int{0}},
		{"Darcy", darcy, 2, Sampling{}, []int{0}, []int{1}},
		{"Darcy a -> u", darcy, 1, Sampling{Inputs: []string{"a"}, Outputs: []string{"u"}}, []int{0}, []int{1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Open(tc.fx.path, Options{Stride: tc.stride})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			p, err := d.Plan(tc.s)
			if err != nil {
				t.Fatal(err)
			}
			pts := d.Points()
			in := make([]float32, prod(p.InputShape(1)))
			tgt := make([]float32, prod(p.TargetShape(1)))
			in2 := slices.Clone(in)
			tgt2 := slices.Clone(tgt)
			block := make([]float32, p.ResidentLen())
			h := p.History()
			for i := range tc.fx.n {
				if err := p.ReadResident(block, i); err != nil {
					t.Fatal(err)
				}
				for _, pr := range p.Pairs([]int{i}) {
					if err := p.ReadPair(pr, in, tgt); err != nil {
						t.Fatal(err)
					}
					p.PairFrom(block, pr.Start, in2, tgt2)
					if !slices.Equal(in, in2) || !slices.Equal(tgt, tgt2) {
						t.Fatalf("pair %v: ReadPair and PairFrom differ", pr)
					}
					c := 0
					for f := range h {
						for _, v := range tc.inVars {
							checkBlock(t, tc.fx, tc.stride, in[c*pts:(c+1)*pts], v, i, pr.Start+f, "input")
							c++
						}
					}
					tf := pr.Start + h
					if p.Static() {
						tf = 0
					}
					for j, v := range tc.outVar {
						checkBlock(t, tc.fx, tc.stride, tgt[j*pts:(j+1)*pts], v, i, tf, "target")
					}
				}
			}
		})
	}
}

func prod(s []int) int {
	p := 1
	for _, v := range s {
		p *= v
	}
	return p
}
