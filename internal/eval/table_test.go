package eval

import (
	"math"
	"strings"
	"testing"
)

func TestFormatInterval(t *testing.T) {
	cases := []struct {
		iv   Interval
		want string
	}{
		{Interval{Mean: 0.0416, Low: 0.0401, High: 0.043}, "0.0416 [0.0401, 0.043]"},
		{Interval{Mean: 7.446e-6, Low: 4.343e-6, High: 1.163e-5}, "7.446e-06 [4.343e-06, 1.163e-05]"},
		{Interval{Mean: 0, Low: 0, High: 0.05662}, "0 [0, 0.05662]"},
		{Interval{Mean: math.NaN(), Low: math.NaN(), High: math.NaN()}, "n/a"},
	}
	for _, c := range cases {
		if got := FormatInterval(c.iv); got != c.want {
			t.Errorf("FormatInterval(%+v) = %q, want %q", c.iv, got, c.want)
		}
	}
}

// TestWriteTables: one Markdown table per paper table, one row per model,
// rollout tables left out for static data.
func TestWriteTables(t *testing.T) {
	sum := func(relL2 float64, static bool) Summary {
		s := Summary{Static: static, Metrics: map[string]Interval{}}
		for _, n := range MetricNames() {
			s.Metrics[n] = Interval{Mean: 1, Low: 0.5, High: 2}
		}
		s.Metrics[MetricRelL2] = Interval{Mean: relL2, Low: relL2 / 2, High: relL2 * 2}
		if !static {
			s.CrashRate = &Interval{Mean: 0.25, Low: 0.1, High: 0.5}
		}
		return s
	}
	var b strings.Builder
	if err := WriteTables(&b, "intro", []Row{{"uhno", sum(0.04, false)}, {"fno", sum(0.12, false)}}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{"intro\n\n", "**Accuracy (Tab. main-acc): relL2 over the rollout**\n\n| Model | relL2 ↓ |\n|---|---|\n| uhno | 0.04 [0.02, 0.08] |\n| fno | 0.12 [0.06, 0.24] |\n",
		"| Model | MSE ↓ | E-drift ↓ | crash ↓ |\n|---|---|---|---|\n| uhno | 1 [0.5, 2] | 1 [0.5, 2] | 0.25 [0.1, 0.5] |", "Tab. spectral", "Tab. main-acc-h1"} {
		if !strings.Contains(got, want) {
			t.Errorf("tables lack %q:\n%s", want, got)
		}
	}
	b.Reset()
	if err := WriteTables(&b, "", []Row{{"uhno", sum(0.04, true)}}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "Stability") || !strings.Contains(b.String(), "Tab. spectral") {
		t.Errorf("static tables:\n%s", b.String())
	}
}
