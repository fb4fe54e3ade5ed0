package model

import (
	"fmt"
	"testing"

	"uhno/internal/config"
	"uhno/internal/config/configtest"
	"uhno/internal/tensor"
)

// Parameter counts of the paper's configurations, verified against the
// PyTorch yardstick (/work/shared/yardstick/uhno_torch.py, run with Debian's
// torch 1.13: `python3 uhno_torch.py`, functions param_report and
// build_model). Burgers: C0 = 32, L = 3, K0 = 24, 1D, in = out = 1. NS-2D:
// C0 = 32, L = 3, K0 = 12, 2D, out = 1, in = 1 (the yardstick's report) or
// 10 (uhno's ns2d history). Both read C_l = C0 2^l with one spectral
// weight per Fourier corner, 4 sigma groups, projection width 128.
var yardstickCounts = []struct {
	task  string
	in    int
	modes map[string]int
	// fnoWidth is the yardstick's parameter-matched FNO width
	// (fno_width_for_budget) and fnoCount its count.
	fnoWidth, fnoCount int
}{
	{"burgers", 1, map[string]int{
		"full": 6696892, "A": 5496481, "B": 1268277, "C": 6696892, "D": 6696892, "E": 6696892,
		"F": 6696181, "G": 6907228, "H": 6696892, "I": 6696892,
	}, 184, 6660689},
	{"ns2d", 1, map[string]int{
		"full": 64266172, "A": 63065761, "B": 1526325, "C": 64266172, "D": 64266172, "E": 64266172,
		"F": 64265461, "G": 63312764, "H": 64266172, "I": 64266172,
	}, 167, 64390447},
	{"ns2d", 10, map[string]int{"full": 64266460}, 167, 64391950},
}

// taskConfig is a task's built-in configuration, validated.
func taskConfig(t testing.TB, task string) config.Config { return configtest.Builtin(t, task, nil) }

// TestPaperCounts checks CountUHNO against the yardstick's counts for the
// paper's configurations (every mode) and the matched FNO widths.
func TestPaperCounts(t *testing.T) {
	for _, y := range yardstickCounts {
		c := taskConfig(t, y.task)
		s, err := SpecFromConfig(c, y.in, 1)
		if err != nil {
			t.Fatal(err)
		}
		for mode, want := range y.modes {
			s.Mode = mode
			if got := CountUHNO(s); got != want {
				t.Errorf("%s in=%d mode %s: %d parameters, yardstick %d", y.task, y.in, mode, got, want)
			}
		}
		s.Mode = ModeFull
		f, err := FNOForBudget(FNOSpecFor(s, 0), CountUHNO(s))
		if err != nil {
			t.Fatal(err)
		}
		if f.Width != y.fnoWidth || CountFNO(f) != y.fnoCount {
			t.Errorf("%s in=%d: matched FNO width %d with %d parameters, yardstick %d with %d", y.task, y.in, f.Width, CountFNO(f), y.fnoWidth, y.fnoCount)
		}
	}
	// The yardstick's FNO at widths 24 and 32 (param_report).
	for _, c := range []struct{ dim, k0, width, want int }{{1, 24, 24, 116369}, {1, 24, 32, 205249}, {2, 12, 24, 1332881}, {2, 12, 32, 2367937}} {
		s := FNOSpec{Dim: c.dim, InChannels: 1, OutChannels: 1, Width: c.width, K0: c.k0, Blocks: 4, ProjHidden: 128}
		if got := CountFNO(s); got != c.want {
			t.Errorf("FNO %dD width %d: %d parameters, yardstick %d", c.dim, c.width, got, c.want)
		}
	}
}

// TestCountsMatchAllocation: CountUHNO and CountFNO equal the allocated
// parameter count for every mode and dimension.
func TestCountsMatchAllocation(t *testing.T) {
	b := newBackend()
	for dim := 1; dim <= 3; dim++ {
		for _, mode := range Modes() {
			s := tiny(dim, mode)
			if got, want := mustUHNO(t, b, s, 1).Params().Count(), CountUHNO(s); got != want {
				t.Errorf("%dD %s: allocated %d, CountUHNO %d", dim, mode, got, want)
			}
		}
	}
}

// TestModeGMatchesFull: on every task's configuration the automatic flat
// width of mode G lands within 10% of Full (Tab. ablation-setup "matched
// parameters"), with 2L+1 blocks.
func TestModeGMatchesFull(t *testing.T) {
	for _, task := range config.TaskNames() {
		c := taskConfig(t, task)
		s, err := SpecFromConfig(c, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		full := CountUHNO(s)
		s.Mode = ModeNoUShape
		g, err := ResolveFlat(s)
		if err != nil {
			t.Fatalf("%s: %v", task, err)
		}
		if got := CountUHNO(g); !withinBudget(got, full) || g.FlatBlocks != 2*s.Levels+1 || g.FlatWidth%s.Groups != 0 {
			t.Errorf("%s: mode G width %d, %d blocks, %d parameters vs Full %d", task, g.FlatWidth, g.FlatBlocks, got, full)
		}
	}
}

// TestBudget checks the --params option: U-HNO scaled to the paper's
// stated ~0.62M and FNO matched to the result, within 10%.
func TestBudget(t *testing.T) {
	cases := []struct {
		task        string
		in          int
		c0, groups  int // the width the budget chooses
		count       int
		fno, fnoCnt int
	}{
		// Burgers: C0 = 10 (C_l = 10, 20, 40, 80), groups 2 (largest divisor of 10 <= 4).
		{"burgers", 1, 10, 2, 656816, 58, 667373},
		// NS-2D: C0 = 3 (C_l = 3, 6, 12, 24), groups 3.
		{"ns2d", 1, 3, 3, 566172, 16, 593249},
	}
	target, err := ParseCount("0.62M")
	if err != nil || target != 620000 {
		t.Fatalf("ParseCount(0.62M) = %d, %v", target, err)
	}
	for _, c := range cases {
		s, err := SpecFromConfig(taskConfig(t, c.task), c.in, 1)
		if err != nil {
			t.Fatal(err)
		}
		u, err := UHNOForBudget(s, target)
		if err != nil {
			t.Fatal(err)
		}
		n := CountUHNO(u)
		if u.C0 != c.c0 || u.Groups != c.groups || n != c.count || !withinBudget(n, target) {
			t.Errorf("%s: budget C0 %d groups %d count %d, want %d %d %d", c.task, u.C0, u.Groups, n, c.c0, c.groups, c.count)
		}
		// Neighbouring widths are farther from the target.
		for _, c0 := range []int{u.C0 - 1, u.C0 + 1} {
			v := u
			v.C0, v.Groups = c0, largestDivisor(c0, s.Groups)
			if d := CountUHNO(v) - target; abs(d) < abs(n-target) {
				t.Errorf("%s: C0 %d gives %d parameters, closer to %d than C0 %d", c.task, c0, CountUHNO(v), target, u.C0)
			}
		}
		f, err := FNOForBudget(FNOSpecFor(u, 0), n)
		if err != nil {
			t.Fatal(err)
		}
		if f.Width != c.fno || CountFNO(f) != c.fnoCnt || !withinBudget(CountFNO(f), n) {
			t.Errorf("%s: FNO width %d count %d, want %d %d", c.task, f.Width, CountFNO(f), c.fno, c.fnoCnt)
		}
		// Mode G under a budget is matched to the scaled Full.
		s.Mode = ModeNoUShape
		g, err := UHNOForBudget(s, target)
		if err != nil {
			t.Fatal(err)
		}
		full := g
		full.Mode, full.FlatWidth, full.FlatBlocks = ModeFull, 0, 0
		if !withinBudget(CountUHNO(g), CountUHNO(full)) {
			t.Errorf("%s: mode G %d parameters vs budget Full %d", c.task, CountUHNO(g), CountUHNO(full))
		}
	}
	// A target below the smallest model cannot be met.
	s, _ := SpecFromConfig(taskConfig(t, "burgers"), 1, 1)
	if _, err := UHNOForBudget(s, 1000); err == nil {
		t.Error("a 1000-parameter U-HNO budget should fail")
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestWidthForBudget(t *testing.T) {
	sq := func(w int) int { return w * w }
	for _, c := range []struct {
		target, step, want int
		ok                 bool
	}{
		{100, 1, 10, true}, {110, 1, 10, true}, {111, 1, 11, true}, {1, 1, 1, true},
		{100, 4, 8, false}, // 64 or 144: the closer (64) is 36% off
		{196, 7, 14, true},
	} {
		got, err := WidthForBudget(sq, c.target, c.step)
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("target %d step %d: width %d err %v, want %d ok=%v", c.target, c.step, got, err, c.want, c.ok)
		}
	}
}

func TestParseCount(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"0.62M", 620000, true}, {"620k", 620000, true}, {"620000", 620000, true}, {" 6.7m ", 6700000, true},
		{"1.5K", 1500, true}, {"", 0, false}, {"M", 0, false}, {"-3M", 0, false}, {"0", 0, false}, {"1e400", 0, false}, {"abc", 0, false},
	} {
		got, err := ParseCount(c.in)
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("ParseCount(%q) = %d, %v; want %d ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
	if FormatCount(6696892) != "6.697M" || FormatCount(620000) != "620.0k" || FormatCount(950) != "950" {
		t.Errorf("FormatCount: %s %s %s", FormatCount(6696892), FormatCount(620000), FormatCount(950))
	}
}

// TestSpecFromConfig maps every task's model.* and spar.* keys.
func TestSpecFromConfig(t *testing.T) {
	for _, task := range config.TaskNames() {
		c := taskConfig(t, task)
		s, err := SpecFromConfig(c, 3, 2)
		if err != nil {
			t.Fatalf("%s: %v", task, err)
		}
		m := c.Model
		want := Spec{Dim: c.Dim, InChannels: 3, OutChannels: 2, Levels: m.Levels, C0: m.C0, WidthMult: m.WidthMult, K0: m.K0,
			M: m.M, Sigmas: m.Sigmas, Groups: m.Groups, MaxRadius: m.MaxRadius, ProjHidden: m.ProjHidden, Mode: m.Ablation,
			SPAR: tensor.SPARParams{Rho0: c.SPAR.Rho0, Beta: c.SPAR.Beta, RhoMin: c.SPAR.RhoMin, RhoMax: c.SPAR.RhoMax,
				Temperature: c.SPAR.Temperature, Eps: c.SPAR.Eps, UnbiasedStd: c.SPAR.UnbiasedStd},
			DecoderResidual: DecoderOutside} // the built-in default since issue 20's evidence
		if fmt.Sprint(s) != fmt.Sprint(want) {
			t.Errorf("%s: %+v\nwant %+v", task, s, want)
		}
		if s.SPAR != tensor.DefaultSPAR {
			t.Errorf("%s: SPAR %+v differs from the paper's defaults", task, s.SPAR)
		}
		t.Logf("%s: U-HNO %s parameters", task, FormatCount(CountUHNO(s)))
	}
	c := taskConfig(t, "burgers")
	c.Model.C0 = 30 // not a multiple of the 4 groups
	if _, err := SpecFromConfig(c, 1, 1); err == nil {
		t.Error("C0 = 30 with 4 groups should be rejected")
	}
}
