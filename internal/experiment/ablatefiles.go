package experiment

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"uhno/internal/eval"
	"uhno/internal/eval/figure"
	"uhno/internal/runrec"
	"uhno/internal/train"
)

// The outputs of an ablation: the cached evaluations it reads back, the
// training time from each run's log, ablation.json, ablation.md and its
// figure.

// readEvalCache returns the evaluation in dir when it exists and was made
// of the run's last step with the wanted rollout, trajectories and
// bootstrap; nil when it must be (re)made.
func readEvalCache(dir string, lastStep, steps, trajs int, opts *AblateOptions) (*eval.Results, error) {
	r, err := currentResults(dir, evalWant{Runs: []evalRun{{Step: lastStep}}, Steps: steps, Trajs: trajs, HorizonMult: 1,
		Resamples: opts.Resamples, Seed: opts.Seed})
	if err != nil {
		return nil, fmt.Errorf("ablate: %w", err)
	}
	return r, nil
}

// trainSeconds is the training time recorded in a run's log (the last
// record's elapsed_s), 0 when the log cannot be read.
func trainSeconds(dir string) float64 {
	var last float64
	// Lenient: a line that does not decode is passed over.
	_, _ = runrec.ScanLog(filepath.Join(dir, train.LogFile), func(_ int, line []byte) error {
		var r train.LogRecord
		if json.Unmarshal(line, &r) == nil && (r.Kind == train.KindTrain || r.Kind == train.KindVal) {
			last = r.ElapsedSec
		}
		return nil
	})
	return last
}

// ablateCommand is the command line that reproduces the ablation.
func ablateCommand(opts *AblateOptions) string {
	parts := []string{"uhno ablate", "--task " + opts.Task}
	if opts.Sweep != "" {
		parts = append(parts, "--sweep "+opts.Sweep)
	}
	if opts.Modes != "" {
		parts = append(parts, "--modes "+opts.Modes)
	}
	if len(opts.Seeds) > 0 {
		seeds := make([]string, len(opts.Seeds))
		for i, s := range opts.Seeds {
			seeds[i] = strconv.FormatInt(s, 10)
		}
		parts = append(parts, "--seeds "+strings.Join(seeds, ","))
	}
	if opts.Steps > 0 {
		parts = append(parts, "--steps "+strconv.Itoa(opts.Steps))
	}
	if opts.WarmupSet {
		parts = append(parts, "--warmup "+strconv.Itoa(opts.Warmup))
	}
	if opts.Batch > 0 {
		parts = append(parts, "--batch "+strconv.Itoa(opts.Batch))
	}
	if opts.Params != "" {
		parts = append(parts, "--params "+opts.Params)
	}
	for _, s := range opts.Sets {
		parts = append(parts, "--set "+s)
	}
	if opts.Rollout > 0 {
		parts = append(parts, "--rollout "+strconv.Itoa(opts.Rollout))
	}
	if opts.Limit > 0 {
		parts = append(parts, "--trajectories "+strconv.Itoa(opts.Limit))
	}
	return strings.Join(parts, " ")
}

// writeAblation writes ablation.json, ablation.md and, unless noFigures,
// the figure, and prints the table.
func writeAblation(dir string, res *eval.Ablation, out io.Writer, noFigures bool) error {
	raw, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return fmt.Errorf("ablate: encoding results: %w", err)
	}
	if err := writeFile("ablate", filepath.Join(dir, eval.AblationFile), append(raw, '\n')); err != nil {
		return err
	}
	md := ablationMarkdown(res)
	if err := writeFile("ablate", filepath.Join(dir, "ablation.md"), []byte(md)); err != nil {
		return err
	}
	fmt.Fprint(out, md)
	var fig string
	if !noFigures {
		if fig, err = ablationFigure(dir, res); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "results in %s and %s", filepath.Join(dir, eval.AblationFile), filepath.Join(dir, "ablation.md"))
	if fig != "" {
		fmt.Fprintf(out, ", figure %s", fig)
	}
	fmt.Fprintln(out)
	return nil
}

// ablationFigure draws the sweep's curves or the modes' degradation bars
// into dir/figures and returns the file ("" when there is nothing to
// draw: a lone Full).
func ablationFigure(dir string, res *eval.Ablation) (string, error) {
	figs := filepath.Join(dir, "figures")
	if err := os.MkdirAll(figs, 0o755); err != nil {
		return "", fmt.Errorf("ablate: %w", err)
	}
	switch {
	case res.Kind == "sweep":
		fig := filepath.Join(figs, "sweep.png")
		return fig, sweepFigure(fig, res)
	case len(res.Entries) > 1:
		fig := filepath.Join(figs, "degradation.png")
		var groups []string
		l2, h1 := figure.BarSeries{Name: "relL2 / Full"}, figure.BarSeries{Name: "relH1 / Full"}
		for _, e := range res.Entries[1:] {
			groups = append(groups, e.Mode)
			l2.Values = append(l2.Values, e.Factor[eval.MetricRelL2])
			h1.Values = append(h1.Values, e.Factor[eval.MetricRelH1])
		}
		title := fmt.Sprintf("%s ablation: degradation factor relative to Full (%d steps)", res.Task, res.Schedule.Steps)
		return fig, figure.Bars(fig, title, "factor (mode / Full)", groups, []figure.BarSeries{l2, h1}, 1)
	}
	return "", nil
}

// ablationMarkdown is ablation.md: Tab. burgers-ablation's columns with
// intervals, and each mode's degradation factors (or a sweep's table).
func ablationMarkdown(res *eval.Ablation) string {
	var b bytes.Buffer
	what := "Ablation"
	if res.Kind == "sweep" {
		what = "Sweep of " + res.SweepKey
	}
	fmt.Fprintf(&b, "# %s, task %s\n\n", what, res.Task)
	sets := ""
	if len(res.Schedule.Sets) > 0 {
		sets = ", --set " + strings.Join(res.Schedule.Sets, " --set ")
	}
	params := ""
	if res.Schedule.Params != "" {
		params = ", budget " + res.Schedule.Params
	}
	fmt.Fprintf(&b, "Every run: %d steps (warm-up %d, then cosine), batch %d, peak lr %g, seed %d%s%s. "+
		"Evaluated by a %d-step rollout on %d test trajectories of %s; values are means over trajectories with 95%% percentile "+
		"bootstrap intervals. Factors are each mean over Full's.\n\n",
		res.Schedule.Steps, res.Schedule.Warmup, res.Schedule.Batch, res.Schedule.LR, res.Schedule.Seed, params, sets,
		res.Steps, res.Trajs, filepath.Base(res.Data))
	fmt.Fprintf(&b, "Command: `%s`\n\n", res.Command)
	first := "Model"
	if res.Kind == "sweep" {
		first = res.SweepKey
	}
	fmt.Fprintf(&b, "| %s | parameters | rollout MSE ↓ | rollout relL2 ↓ | rollout relH1 ↓ |", first)
	if res.Kind != "sweep" {
		b.WriteString(" MSE factor | relL2 factor | relH1 factor |")
	}
	b.WriteString("\n|---|---|---|---|---|")
	if res.Kind != "sweep" {
		b.WriteString("---|---|---|")
	}
	b.WriteString("\n")
	for _, e := range res.Entries {
		name := e.Label
		if res.Kind == "sweep" {
			name = e.Value
		}
		fmt.Fprintf(&b, "| %s | %s |", name, groupDigits(e.Params))
		for _, m := range eval.AblationMetrics {
			iv, ok := e.Eval.Metrics[m]
			if !ok {
				b.WriteString(" n/a |")
				continue
			}
			fmt.Fprintf(&b, " %s |", eval.FormatInterval(iv))
		}
		if res.Kind != "sweep" {
			for _, m := range eval.AblationMetrics {
				fmt.Fprintf(&b, " %s |", formatFactor(e.Factor[m]))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// formatFactor prints a degradation factor as "1.23×".
func formatFactor(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", f)
}

// sweepFigure draws endpoint relL2 and relH1 against the swept value
// (Fig. training-dynamics (f)), with their bootstrap intervals. Values
// that are not numbers are placed at their index.
func sweepFigure(path string, res *eval.Ablation) error {
	var x []float64
	numeric := true
	for _, e := range res.Entries {
		v, err := strconv.ParseFloat(e.Value, 64)
		if err != nil {
			numeric = false
		}
		x = append(x, v)
	}
	xlabel := res.SweepKey
	if !numeric {
		for i := range x {
			x[i] = float64(i)
		}
		xlabel += " (entry index)"
	}
	var series []figure.Series
	for _, m := range []string{eval.MetricRelL2, eval.MetricRelH1} {
		s := figure.Series{Name: "rollout " + m, X: x}
		for _, e := range res.Entries {
			iv := e.Eval.Metrics[m]
			s.Y, s.Low, s.High = append(s.Y, iv.Mean), append(s.Low, iv.Low), append(s.High, iv.High)
		}
		series = append(series, s)
	}
	return figure.Curves(path, fmt.Sprintf("%s: endpoint error against %s (%d steps)", res.Task, res.SweepKey, res.Schedule.Steps),
		xlabel, "rollout error", true, series)
}

// groupDigits prints n with thousands separators: 656,816.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
