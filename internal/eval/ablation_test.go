package eval

import (
	"encoding/json"
	"math"
	"testing"
)

func ablationEntry(mode string, mse, l2, h1 float64) AblationEntry {
	return AblationEntry{Mode: mode, Eval: Summary{Metrics: map[string]Interval{
		MetricMSE: {Mean: mse}, MetricRelL2: {Mean: l2}, MetricRelH1: {Mean: h1}}}}
}

// TestDegradationFactors checks the factors relative to Full on known
// values, NaN for an undefined mean or a zero reference, and a JSON round
// trip with NaN as null.
func TestDegradationFactors(t *testing.T) {
	es := []AblationEntry{
		ablationEntry("A", 0.0082, 0.1502, 0.1714),
		ablationEntry("full", 0.0006, 0.0416, 0.0418),
		ablationEntry("C", math.NaN(), 0.0832, 0),
	}
	es[1].Eval.Metrics[MetricRelH1] = Interval{Mean: 0.0418}
	DegradationFactors(es, "full")
	cases := []struct {
		i      int
		metric string
		want   float64
	}{
		{0, MetricRelL2, 0.1502 / 0.0416},
		{0, MetricRelH1, 0.1714 / 0.0418},
		{0, MetricMSE, 0.0082 / 0.0006},
		{1, MetricRelL2, 1},
		{2, MetricRelL2, 2},
		{2, MetricRelH1, 0},
		{2, MetricMSE, math.NaN()},
	}
	for _, c := range cases {
		got := es[c.i].Factor[c.metric]
		if math.IsNaN(c.want) != math.IsNaN(got) || (!math.IsNaN(got) && math.Abs(got-c.want) > 1e-12*c.want) {
			t.Errorf("entry %d %s: factor %v, want %v", c.i, c.metric, got, c.want)
		}
	}
	raw, err := json.Marshal(es[2].Factor)
	if err != nil {
		t.Fatal(err)
	}
	if string(raw) != `{"mse":null,"relH1":0,"relL2":2}` {
		t.Errorf("factors encode as %s", raw)
	}
	var back Factors
	if err := json.Unmarshal(raw, &back); err != nil || !math.IsNaN(back[MetricMSE]) || back[MetricRelL2] != 2 {
		t.Errorf("round trip: %v, %v", back, err)
	}

	none := []AblationEntry{ablationEntry("A", 1, 1, 1)}
	DegradationFactors(none, "full")
	if none[0].Factor != nil {
		t.Errorf("factors without a reference: %v", none[0].Factor)
	}
}
