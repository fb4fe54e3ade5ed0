package eval

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Row is one evaluated model of a table: a label (the model and its
// checkpoint) and its Summary.
type Row struct {
	Name    string
	Summary Summary
}

// tableSpec is one of the paper's result tables: a title and the metrics
// of its columns.
type tableSpec struct {
	title   string
	columns []string // metric names; "crash" is the crash rate
	heads   []string
	rollout bool // only for time-dependent tasks
}

// paperTables mirrors the paper's tables for one task: Tab. main-acc
// (relL2), Tab. main-acc-h1 (relH1), Tab. stability (rollout MSE, energy
// drift, crash rate) and Tab. spectral (binned spectral errors and the
// structure-function error).
var paperTables = []tableSpec{
	{title: "Accuracy (Tab. main-acc): relL2 over the rollout", columns: []string{MetricRelL2}, heads: []string{"relL2 ↓"}},
	{title: "Accuracy (Tab. main-acc-h1): relH1 over the rollout", columns: []string{MetricRelH1}, heads: []string{"relH1 ↓"}},
	{title: "Stability (Tab. stability)", columns: []string{MetricMSE, MetricEnergyDrift, "crash"},
		heads: []string{"MSE ↓", "E-drift ↓", "crash ↓"}, rollout: true},
	{title: "Spectral fidelity (Tab. spectral): E_b pooled (one ratio of sums over all frames and trajectories) and per-frame (mean of each frame's ratio); D-band-pooled",
		columns: []string{MetricBandLowPooled, MetricBandMidPooled, MetricBandHighPooled, MetricBandLow, MetricBandMid, MetricBandHigh, MetricSF},
		heads:   []string{"E_low pooled ↓", "E_mid pooled ↓", "E_high pooled ↓", "E_low per-frame ↓", "E_mid per-frame ↓", "E_high per-frame ↓", "SF ↓"}},
}

// WriteTables writes the paper's tables for the rows as Markdown: one row
// per model, each cell "value [low, high]" with the 95% bootstrap interval
// (Wilson for the crash rate). Tables of rollout metrics are left out for
// static data. intro, when not empty, is written first as a paragraph.
func WriteTables(w io.Writer, intro string, rows []Row) error {
	var b strings.Builder
	if intro != "" {
		b.WriteString(intro + "\n\n")
	}
	static := len(rows) > 0 && rows[0].Summary.Static
	for _, t := range paperTables {
		if t.rollout && static {
			continue
		}
		fmt.Fprintf(&b, "**%s**\n\n| Model | %s |\n|---|%s\n", t.title, strings.Join(t.heads, " | "), strings.Repeat("---|", len(t.heads)))
		for _, r := range rows {
			cells := make([]string, len(t.columns))
			for i, c := range t.columns {
				cells[i] = cell(r.Summary, c)
			}
			fmt.Fprintf(&b, "| %s | %s |\n", r.Name, strings.Join(cells, " | "))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cell formats one metric of a summary.
func cell(s Summary, metric string) string {
	if metric == "crash" {
		if s.CrashRate == nil {
			return "n/a"
		}
		return FormatInterval(*s.CrashRate)
	}
	iv, ok := s.Metrics[metric]
	if !ok {
		return "n/a"
	}
	return FormatInterval(iv)
}

// FormatInterval writes "value [low, high]" with four significant digits;
// an undefined value (no non-crashed trajectory) is "n/a".
func FormatInterval(iv Interval) string {
	if math.IsNaN(iv.Mean) {
		return "n/a"
	}
	return fmt.Sprintf("%s [%s, %s]", num(iv.Mean), num(iv.Low), num(iv.High))
}

// num formats one value: fixed-point for values in [1e-3, 1e4), else
// scientific, four significant digits.
func num(v float64) string {
	a := math.Abs(v)
	if v == 0 || (a >= 1e-3 && a < 1e4) {
		return fmt.Sprintf("%.4g", v)
	}
	return fmt.Sprintf("%.3e", v)
}
