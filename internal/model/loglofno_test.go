package model

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"uhno/internal/tensor"
)

// fnoOf is the FNO with LogLo-FNO spec s's architecture and FNO's
// frequencies 0..K-1.
func fnoOf(s LogLoFNOSpec) FNOSpec {
	s.Frequencies = FrequenciesFirst
	return s
}

// TestLogLoFNOParamsAreFNOs: LogLo-FNO's parameters are FNO's (names,
// shapes, values from the same seed); its count against CountFNO:
// TestRegistryContract.
func TestLogLoFNOParamsAreFNOs(t *testing.T) {
	b := newBackend()
	for _, s := range []LogLoFNOSpec{
		{Dim: 1, InChannels: 2, OutChannels: 1, Width: 5, K0: 4, Blocks: 4, ProjHidden: 8},
		{Dim: 2, InChannels: 10, OutChannels: 1, Width: 6, K0: 3, Blocks: 2, ProjHidden: 7},
		{Dim: 3, InChannels: 5, OutChannels: 5, Width: 3, K0: 2, Blocks: 3, ProjHidden: 4},
	} {
		m, err := NewLogLoFNO(b, s, 9)
		if err != nil {
			t.Fatal(err)
		}
		f, err := NewFNO(b, fnoOf(s), 9)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names(m), names(f)) {
			t.Errorf("parameters %v, FNO's %v", names(m), names(f))
		}
		for _, p := range f.Params().List() {
			if !sameBits(host(b, p), host(b, m.Params().Lookup(p.Name))) {
				t.Errorf("%s differs from FNO's at the same seed", p.Name)
			}
		}
	}
}

// TestLogLoFNOModes: on a grid whose rfft axis has more than K0 bins
// below Nyquist, LogLo-FNO differs from FNO with the same parameters; when
// K0 >= N/2 both keep the whole axis and agree bit for bit; a weight slot
// j moves only frequency LogModes[j].
func TestLogLoFNOModes(t *testing.T) {
	for dim := 1; dim <= 2; dim++ {
		b := newBackend()
		s := LogLoFNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 3, K0: 4, Blocks: 2, ProjHidden: 4}
		m, _ := NewLogLoFNO(b, s, 2)
		f, _ := NewFNO(b, fnoOf(s), 2)
		tp := tensor.NewTape(b)
		tp.SetGrad(false)
		for _, c := range []struct {
			n    int
			same bool
		}{{32, false}, {8, true}} {
			grid := []int{c.n, c.n}[:dim]
			x := input(tp, 6, 2, 2, grid)
			y1, _ := m.Forward(tp, x)
			y2, _ := f.Forward(tp, x)
			if sameBits(host(b, y1), host(b, y2)) != c.same {
				t.Errorf("%dD N=%d: LogLo-FNO and FNO agree: %v, want %v", dim, c.n, !c.same, c.same)
			}
		}
		if got := tensor.LogModes(4, 32); !slices.Equal(got, []int{0, 1, 5, 12}) {
			t.Errorf("LogModes(4, 32) = %v", got)
		}
	}
}

// TestFNOWiderSpec: the preset is the matched FNO at 56/24 of its width,
// about 5x its parameters (the paper: 24 -> 56, 0.59M -> 3.18M).
func TestFNOWiderSpec(t *testing.T) {
	for _, c := range budgetTasks {
		s, err := SpecFromConfig(taskConfig(t, c.task), c.in, 1)
		if err != nil {
			t.Fatal(err)
		}
		u, err := UHNOForBudget(s, 620000)
		if err != nil {
			t.Fatal(err)
		}
		f, err := FNOForBudget(FNOSpecFor(u, 0), CountUHNO(u))
		if err != nil {
			t.Fatal(err)
		}
		w := FNOWiderSpec(u)
		if want := (f.Width*56 + 12) / 24; w.Width != want {
			t.Errorf("%s: width %d, want %d (matched %d x 56/24)", c.task, w.Width, want, f.Width)
		}
		g := f
		g.Width = w.Width
		if w != g {
			t.Errorf("%s: %+v is not the matched FNO %+v widened", c.task, w, f)
		}
		ratio := float64(CountFNO(w)) / float64(CountFNO(f))
		if ratio < 4 || ratio > 6.5 {
			t.Errorf("%s: %.2fx the matched FNO's parameters, want about 5x", c.task, ratio)
		}
		t.Logf("%s: FNO width %d (%d) -> FNO-wider width %d (%d parameters, %.2fx)", c.task, f.Width, CountFNO(f), w.Width, CountFNO(w), ratio)
	}
}

// TestLogLoFNORecordedSpec: a build record written before LogLo-FNO
// became an FNO with a frequency list (issue 21) holds LogLoFNOSpec's
// seven fields and no Frequencies; it must decode, rebuild through
// NewLogLoFNO as LogLo-FNO (name, log frequencies, FNO's parameter names
// and shapes) and compute the bits commit 44cf1b5 computed (the golden
// digest), so its checkpoints load and evaluate unchanged. The same
// record read as an FNO spec stays FNO.
func TestLogLoFNORecordedSpec(t *testing.T) {
	skipUnlessGoldenPlatform(t)
	const record = `{"Dim":2,"InChannels":2,"OutChannels":1,"Width":4,"K0":3,"Blocks":2,"ProjHidden":5}`
	var s LogLoFNOSpec
	if err := json.Unmarshal([]byte(record), &s); err != nil {
		t.Fatal(err)
	}
	b := newBackend()
	m, err := NewLogLoFNO(b, s, 7)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name() != "loglofno" || m.Spec().Frequencies != FrequenciesLog {
		t.Fatalf("rebuilt as %q with frequencies %q", m.Name(), m.Spec().Frequencies)
	}
	f, err := NewFNO(b, s, 7)
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "fno" || !slices.Equal(names(m), names(f)) {
		t.Fatalf("FNO %q; parameters %v, FNO's %v", f.Name(), names(m), names(f))
	}
	for _, p := range f.Params().List() {
		if q := m.Params().Lookup(p.Name); q == nil || !slices.Equal(q.Shape, p.Shape) {
			t.Fatalf("%s: LogLo-FNO's shape differs from FNO's %v", p.Name, p.Shape)
		}
	}
	rescale(b, m, 70)
	if got, want := runDigest(t, b, m, 2, goldenFNOGrid[2]), goldenDefault["2D/loglofno"]; got != want {
		t.Errorf("recorded spec rebuilt: digest %s, want %s", got, want)
	}
	out, err := json.Marshal(LogLoFNOSpecFor(Spec{Dim: 1, InChannels: 1, OutChannels: 1, K0: 4, ProjHidden: 8}))
	if err != nil || !strings.Contains(string(out), `"Frequencies":"log"`) {
		t.Errorf("a new LogLo-FNO record %s (%v) should name its frequencies", out, err)
	}
	if out, _ := json.Marshal(FNOSpecFor(Spec{Dim: 1, InChannels: 1, OutChannels: 1, K0: 4, ProjHidden: 8}, 4)); strings.Contains(string(out), "Frequencies") {
		t.Errorf("an FNO record %s should read as before (no Frequencies)", out)
	}
}
