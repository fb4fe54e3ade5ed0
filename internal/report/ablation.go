package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"uhno/internal/eval"
	"uhno/internal/eval/figure"
	"uhno/internal/model"
)

// ablationPaper returns the paper's value of a mode's metric (mse,
// relL2, relH1) on a task, the table it comes from, and whether the paper
// gives it: Tab. burgers-ablation for Burgers, Tab. ablation-extra and
// ablation-extra-h1 for NS-2D and 3D-CFD (no MSE).
func ablationPaper(task, mode, metric string) (Value, string, bool) {
	if task == BurgersAblationTask {
		v, ok := BurgersAblation.Get(mode, metric)
		return v, BurgersAblation.Label, ok
	}
	var t *Table
	switch metric {
	case eval.MetricRelL2:
		t = &AblationExtra
	case eval.MetricRelH1:
		t = &AblationExtraH1
	default:
		return Value{}, "", false
	}
	v, ok := t.Get(mode, task)
	return v, t.Label, ok
}

// ablationSections writes the ablation and sweep tables and figures.
func (b *builder) ablationSections(abs []ablationInput) {
	if len(abs) == 0 {
		return
	}
	abs = slices.Clone(abs)
	slices.SortStableFunc(abs, func(x, y ablationInput) int {
		return cmp.Or(strings.Compare(x.ab.Kind, y.ab.Kind), cmp.Compare(taskOrder(x.ab.Task), taskOrder(y.ab.Task)))
	})
	first := true
	for _, a := range abs {
		if a.ab.Kind != "modes" {
			continue
		}
		if first {
			b.printf("## Ablations (Tab. burgers-ablation, Tab. ablation-extra, Tab. ablation-extra-h1, Fig. burgers-ablation-bars)\n\n")
			first = false
		}
		b.ablation(a)
	}
	first = true
	for _, a := range abs {
		if a.ab.Kind != "sweep" {
			continue
		}
		if first {
			b.printf("## Sweeps (Fig. training-dynamics (f))\n\n")
			first = false
		}
		b.sweep(a)
	}
}

// ablationSource writes where an ablation's numbers come from.
func (b *builder) ablationSource(a ablationInput) {
	ab := a.ab
	s := ab.Schedule
	command := "not recorded in ablation.json"
	if ab.Command != "" {
		command = code(ab.Command)
	}
	seeds := fmt.Sprintf("seed %d", s.Seed)
	if len(ab.Entries) > 0 && ab.Entries[0].Eval.Seeds != nil { // a merge: the schedule recorded is the first seed's
		sd := ab.Entries[0].Eval.Seeds.Seeds
		seeds = "seeds " + joinSeeds(sd)
		if ab.Command != "" && !strings.Contains(ab.Command, "--seeds") {
			// uhno ablate --seeds records its own command; uhno reproduce
			// --seeds merges ablations each recorded at one seed.
			command = fmt.Sprintf("%s for seed %d, merged over seeds %s by `uhno reproduce --seeds` (eval.MergeAblations)", command, sd[0], joinSeeds(sd))
		}
	}
	sched := fmt.Sprintf("%d steps, %d warm-up, batch %d, lr %g, %s", s.Steps, s.Warmup, s.Batch, s.LR, seeds)
	if s.Params != "" {
		sched += ", --params " + s.Params
	}
	if len(s.Sets) > 0 {
		sched += ", --set " + strings.Join(s.Sets, " --set ")
	}
	b.printf("Source: %s (uhno ablate, uhno %s). Command: %s. Shared schedule: %s. Evaluation: rollout of %d steps on %d test trajectories of %s.\n\n",
		code(a.file), cmp.Or(ab.Version, "version not recorded"), command, sched, ab.Steps, ab.Trajs, code(ab.Data))
	if len(ab.Entries) > 0 && ab.Entries[0].Eval.Seeds != nil {
		b.printf("**Over training seeds %s** (uhno ablate --seeds; eval.MergeAblations): each value is the mean over the seeds of each seed's mean "+
			"over the test trajectories, its interval a bootstrap over seeds and trajectories (so it holds the training variance), and the factors "+
			"are of those means; the runs named are seed %d's.\n\n", joinSeeds(ab.Entries[0].Eval.Seeds.Seeds), ab.Entries[0].Eval.Seeds.Seeds[0])
	}
}

// factor is an entry's degradation factor in a metric: the recorded one,
// else its mean over the reference's.
func factor(e eval.AblationEntry, full *eval.AblationEntry, metric string) float64 {
	if f, ok := e.Factor[metric]; ok {
		return f
	}
	if full == nil {
		return math.NaN()
	}
	a, okA := e.Eval.Metrics[metric]
	r, okR := full.Eval.Metrics[metric]
	if !okA || !okR || r.Mean == 0 {
		return math.NaN()
	}
	return a.Mean / r.Mean
}

// ablation writes one ablation over modes: the raw table, the factors,
// the bar figure and what they say against the paper, in that order.
func (b *builder) ablation(a ablationInput) {
	task := a.ab.Task
	entries := slices.Clone(a.ab.Entries)
	sort.SliceStable(entries, func(i, j int) bool {
		return slices.Index(model.Modes(), entries[i].Mode) < slices.Index(model.Modes(), entries[j].Mode)
	})
	var full *eval.AblationEntry
	for i := range entries {
		if entries[i].Mode == "full" {
			full = &entries[i]
		}
	}
	// The paper's ablation columns: Tab. ablation-extra's tasks (Tab.
	// burgers-ablation, by mode, is one of them).
	hasPaper := slices.Contains(AblationExtra.Columns, task)
	b.ablationIntro(a, hasPaper)
	b.ablationRaw(task, entries)
	if full == nil {
		b.printf("No Full entry: no degradation factors.\n\n")
		b.coverAblation(a, hasPaper)
		return
	}
	facs := b.ablationFactors(task, entries, full)
	if hasPaper {
		b.ablationNotes(a, entries, full, facs)
	}
	b.ablationBars(task, entries, facs, hasPaper)
	b.coverAblation(a, hasPaper)
}

// ablationIntro writes the section's heading, its source and where the
// paper's values come from (or that it has none for the task).
func (b *builder) ablationIntro(a ablationInput, hasPaper bool) {
	task := a.ab.Task
	b.printf("### Ablation, %s\n\n", taskTitle(task))
	b.ablationSource(a)
	switch {
	case !hasPaper:
		var titles []string
		for _, t := range AblationExtra.Columns {
			titles = append(titles, taskTitle(t))
		}
		b.printf("The paper reports ablations on %s only: ours only for %s.\n\n", strings.Join(titles, ", "), task)
	case task == BurgersAblationTask:
		b.printf("Paper values: Tab. burgers-ablation (Tab. ablation-extra's and ablation-extra-h1's Burgers columns repeat its relL2 and relH1).\n\n")
	default:
		b.printf("Paper values: Tab. ablation-extra and Tab. ablation-extra-h1, %s column. The paper gives no rollout MSE for %s.\n\n", task, task)
	}
}

// ablationRaw writes every mode's metrics beside the paper's values.
func (b *builder) ablationRaw(task string, entries []eval.AblationEntry) {
	heads := []string{"mode", "run", "step", "params"}
	for _, m := range eval.AblationMetrics {
		heads = append(heads, m+", ours", m+", paper")
	}
	b.printf("| %s |\n|%s\n", strings.Join(heads, " | "), strings.Repeat("---|", len(heads)))
	for _, e := range entries {
		row := []string{e.Label, code(e.Run), fmt.Sprint(e.Step), fmt.Sprint(e.Params)}
		for _, m := range eval.AblationMetrics {
			iv, _ := value(e.Eval, m)
			p, _, ok := ablationPaper(task, e.Mode, m)
			row = append(row, ours(iv), paperCell(p, ok))
		}
		b.printf("| %s |\n", strings.Join(row, " | "))
	}
	b.printf("\n")
}

// factorPair is a mode's degradation factor (mode / Full), ours and the
// paper's (NaN where the paper has none).
type factorPair struct{ ours, paper float64 }

// ablationFactors writes the degradation factors' table and returns them
// by metric, then mode.
func (b *builder) ablationFactors(task string, entries []eval.AblationEntry, full *eval.AblationEntry) map[string]map[string]factorPair {
	b.printf("Degradation factors (mode / Full; the paper's from its table):\n\n")
	heads := []string{"mode"}
	for _, m := range eval.AblationMetrics {
		heads = append(heads, m+" factor, ours", m+" factor, paper")
	}
	b.printf("| %s |\n|%s\n", strings.Join(heads, " | "), strings.Repeat("---|", len(heads)))
	facs := map[string]map[string]factorPair{}
	for _, m := range eval.AblationMetrics {
		facs[m] = map[string]factorPair{}
	}
	for _, e := range entries {
		if e.Mode == "full" {
			continue
		}
		row := []string{e.Label}
		for _, m := range eval.AblationMetrics {
			f := factor(e, full, m)
			pf := math.NaN()
			p, _, ok := ablationPaper(task, e.Mode, m)
			pr, _, okR := ablationPaper(task, "full", m)
			if ok && okR && pr.Mean != 0 {
				pf = p.Mean / pr.Mean
			}
			facs[m][e.Mode] = factorPair{f, pf}
			row = append(row, factorCell(f), factorCell(pf))
		}
		b.printf("| %s |\n", strings.Join(row, " | "))
	}
	b.printf("\n")
	return facs
}

// ablationNotes writes what the comparison with the paper says: each mode
// that beats Full (contradictions), the most damaging change in relL2 and
// relH1, and the rank correlation of the factors.
func (b *builder) ablationNotes(a ablationInput, entries []eval.AblationEntry, full *eval.AblationEntry, facs map[string]map[string]factorPair) {
	task := a.ab.Task
	where := fmt.Sprintf("ablation, %s (%s)", task, a.file)
	var notes []string
	for _, e := range entries {
		if e.Mode == "full" {
			continue
		}
		var beats []string // "mse (0.31x)", for the summary
		resolved := 0
		for _, m := range eval.AblationMetrics {
			if _, _, ok := ablationPaper(task, e.Mode, m); !ok {
				continue
			}
			f := facs[m][e.Mode].ours
			if !(f < 1) {
				continue
			}
			iv, _ := value(e.Eval, m)
			fv, _ := value(full.Eval, m)
			res := "our intervals do not overlap"
			if !disjoint(iv, fv) {
				res = "but our intervals overlap, so ours does not resolve it at 95%"
			} else {
				resolved++
			}
			beats = append(beats, fmt.Sprintf("%s (%s)", m, factorCell(f)))
			notes = append(notes, b.contradictDetail(where, fmt.Sprintf("%s beats Full U-HNO in %s (factor %s: %s against Full's %s; %s); the paper has Full best on every metric.",
				e.Label, m, factorCell(f), ours(iv), ours(fv), res)))
		}
		if len(beats) > 0 {
			b.summarise(where, fmt.Sprintf("%s beats Full U-HNO in %s, resolved at 95%% in %d of %d; the paper has Full best on every metric.",
				e.Label, strings.Join(beats, ", "), resolved, len(beats)))
		}
	}
	for _, m := range []string{eval.MetricRelL2, eval.MetricRelH1} {
		var modes []string
		var xs, ys []float64
		for _, e := range entries {
			p, ok := facs[m][e.Mode]
			if ok && !math.IsNaN(p.ours) && !math.IsNaN(p.paper) {
				modes = append(modes, e.Mode)
				xs, ys = append(xs, p.ours), append(ys, p.paper)
			}
		}
		if len(modes) < 2 {
			continue
		}
		io, ip := argmax(xs), argmax(ys)
		if io != ip {
			notes = append(notes, b.contradict(where, fmt.Sprintf("in %s the paper's most damaging change is %s (%s); ours is %s (%s), where %s costs %s.",
				m, modeName(entries, modes[ip]), factorCell(ys[ip]), modeName(entries, modes[io]), factorCell(xs[io]), modes[ip], factorCell(xs[ip]))))
		} else {
			notes = append(notes, fmt.Sprintf("Agrees with the paper on the most damaging change in %s: %s (ours %s, paper %s).",
				m, modeName(entries, modes[io]), factorCell(xs[io]), factorCell(ys[ip])))
		}
		if len(modes) >= 3 {
			notes = append(notes, fmt.Sprintf("Spearman rank correlation of our %s factors with the paper's over %d modes: %.2f.", m, len(modes), spearman(xs, ys)))
		}
	}
	for _, n := range notes {
		b.printf("- %s\n", n)
	}
	if len(notes) > 0 {
		b.printf("\n")
	}
}

// ablationBars draws Fig. burgers-ablation-bars: relL2 and relH1 factor
// per mode, the paper's beside ours where it has them.
func (b *builder) ablationBars(task string, entries []eval.AblationEntry, facs map[string]map[string]factorPair, hasPaper bool) {
	var groups []string
	var sL2, sH1, pL2, pH1 []float64
	for _, e := range entries {
		if e.Mode == "full" {
			continue
		}
		groups = append(groups, e.Mode)
		sL2, pL2 = append(sL2, facs[eval.MetricRelL2][e.Mode].ours), append(pL2, facs[eval.MetricRelL2][e.Mode].paper)
		sH1, pH1 = append(sH1, facs[eval.MetricRelH1][e.Mode].ours), append(pH1, facs[eval.MetricRelH1][e.Mode].paper)
	}
	if len(groups) == 0 || b.noFigures {
		return
	}
	series := []figure.BarSeries{{Name: "relL2, ours", Values: sL2}}
	if hasPaper {
		series = append(series, figure.BarSeries{Name: "relL2, paper", Values: pL2})
	}
	series = append(series, figure.BarSeries{Name: "relH1, ours", Values: sH1})
	if hasPaper {
		series = append(series, figure.BarSeries{Name: "relH1, paper", Values: pH1})
	}
	path, rel := b.figure("ablation_factors_" + task)
	caption := fmt.Sprintf("Fig. burgers-ablation-bars (%s): relL2 and relH1 of each mode relative to Full U-HNO", task)
	if hasPaper {
		caption += ", ours beside the paper's"
	}
	caption += "; the dashed line is 1 (no change)."
	err := figure.Bars(path, fmt.Sprintf("%s ablation: degradation factor (mode / Full)", task), "factor", groups, series, 1)
	b.wrote(path, rel, caption, err)
}

func (b *builder) coverAblation(a ablationInput, hasPaper bool) {
	task := a.ab.Task
	by := fmt.Sprintf("%s (%s)", code(a.file), task)
	if !hasPaper {
		by = fmt.Sprintf("%s (%s, ours only: the paper has no %s ablation)", code(a.file), task, task)
	}
	if task == BurgersAblationTask {
		b.cover("Tab. burgers-ablation", by)
		b.cover("Fig. burgers-ablation-bars", by)
	}
	if hasPaper {
		b.cover("Tab. ablation-extra", by)
		b.cover("Tab. ablation-extra-h1", by)
	}
	if !hasPaper {
		b.cover("Tab. ablation-extra", by)
	}
}

// modeName is the label of the entry of mode m.
func modeName(entries []eval.AblationEntry, m string) string {
	for _, e := range entries {
		if e.Mode == m {
			return e.Label
		}
	}
	return m
}

// factorCell formats a degradation factor.
func factorCell(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "—"
	}
	if math.Abs(f-1) < 0.01 {
		return fmt.Sprintf("%.4fx", f)
	}
	return fmt.Sprintf("%.2fx", f)
}

func argmax(xs []float64) int {
	best := 0
	for i, x := range xs {
		if x > xs[best] {
			best = i
		}
	}
	return best
}

// spearman is the rank correlation of xs and ys (average ranks for ties).
func spearman(xs, ys []float64) float64 {
	rx, ry := ranks(xs), ranks(ys)
	n := float64(len(xs))
	var mx, my float64
	for i := range rx {
		mx += rx[i] / n
		my += ry[i] / n
	}
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += (rx[i] - mx) * (ry[i] - my)
		sxx += (rx[i] - mx) * (rx[i] - mx)
		syy += (ry[i] - my) * (ry[i] - my)
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}

// sweep writes one sweep: the table, the figure of endpoint relL2 and
// relH1 against the swept value, and, for spar.rho0, the paper's claim.
func (b *builder) sweep(a ablationInput) {
	ab := a.ab
	task := ab.Task
	b.printf("### Sweep of %s, %s\n\n", ab.SweepKey, taskTitle(task))
	b.ablationSource(a)
	if ab.SweepKey == SweepClaimKey {
		b.printf("The paper prints no numbers for Fig. training-dynamics (f); its caption says endpoint relH1 against rho0 in [0.1, 0.7] is near its minimum at rho0 = %s. Ours only below.\n\n", paperNum(SweepClaimBest))
	} else {
		b.printf("The paper has no sweep of %s: ours only.\n\n", ab.SweepKey)
	}
	entries := slices.Clone(ab.Entries)
	xs := make([]float64, len(entries))
	numeric := true
	for i, e := range entries {
		x, err := strconv.ParseFloat(strings.TrimSpace(e.Value), 64)
		if err != nil {
			numeric = false
		}
		xs[i] = x
	}
	if numeric {
		sort.SliceStable(entries, func(i, j int) bool {
			xi, _ := strconv.ParseFloat(strings.TrimSpace(entries[i].Value), 64)
			xj, _ := strconv.ParseFloat(strings.TrimSpace(entries[j].Value), 64)
			return xi < xj
		})
		for i, e := range entries {
			xs[i], _ = strconv.ParseFloat(strings.TrimSpace(e.Value), 64)
		}
	} else {
		for i := range xs {
			xs[i] = float64(i + 1)
		}
	}
	b.printf("| %s | run | step | MSE | relL2 | relH1 |\n|---|---|---|---|---|---|\n", ab.SweepKey)
	for _, e := range entries {
		mse, _ := value(e.Eval, eval.MetricMSE)
		l2, _ := value(e.Eval, eval.MetricRelL2)
		h1, _ := value(e.Eval, eval.MetricRelH1)
		b.printf("| %s | %s | %d | %s | %s | %s |\n", cmp.Or(e.Value, e.Label), code(e.Run), e.Step, ours(mse), ours(l2), ours(h1))
	}
	b.printf("\n")

	var notes []string
	best, bestMean := -1, math.Inf(1)
	for i, e := range entries {
		if h, ok := value(e.Eval, eval.MetricRelH1); ok && h.Mean < bestMean {
			best, bestMean = i, h.Mean
		}
	}
	if ab.SweepKey == SweepClaimKey && numeric && best >= 0 {
		where := fmt.Sprintf("Fig. training-dynamics (f), %s (%s)", task, a.file)
		bh, _ := value(entries[best].Eval, eval.MetricRelH1)
		near := 0
		for i := range xs {
			if math.Abs(xs[i]-SweepClaimBest) < math.Abs(xs[near]-SweepClaimBest) {
				near = i
			}
		}
		nh, _ := value(entries[near].Eval, eval.MetricRelH1)
		switch {
		case math.Abs(xs[best]-SweepClaimBest) <= 0.1+1e-9:
			notes = append(notes, fmt.Sprintf("Agrees with the paper: our endpoint relH1 is lowest at %s = %s (%s), within 0.1 of the paper's %s.",
				ab.SweepKey, entries[best].Value, ours(bh), paperNum(SweepClaimBest)))
		default:
			res := "our intervals do not overlap"
			if !disjoint(bh, nh) {
				res = "but our intervals overlap, so ours does not resolve it at 95%"
			}
			notes = append(notes, b.contradict(where, fmt.Sprintf("the paper finds endpoint relH1 near its minimum at %s = %s; ours is lowest at %s (%s), and %s = %s gives %s; %s.",
				ab.SweepKey, paperNum(SweepClaimBest), entries[best].Value, ours(bh), ab.SweepKey, entries[near].Value, ours(nh), res)))
		}
	}
	if !numeric {
		notes = append(notes, "The swept values are not all numbers: the figure places them in the sweep's order.")
	}
	for _, n := range notes {
		b.printf("- %s\n", n)
	}
	if len(notes) > 0 {
		b.printf("\n")
	}

	if b.noFigures {
		return
	}
	var series []figure.Series
	for _, m := range []string{eval.MetricRelL2, eval.MetricRelH1} {
		s := figure.Series{Name: m + " (95% bootstrap band)"}
		for i, e := range entries {
			iv, _ := value(e.Eval, m)
			s.X, s.Y = append(s.X, xs[i]), append(s.Y, iv.Mean)
			s.Low, s.High = append(s.Low, iv.Low), append(s.High, iv.High)
		}
		series = append(series, s)
	}
	path, rel := b.figure("sweep_" + task + "_" + ab.SweepKey)
	err := figure.Curves(path, fmt.Sprintf("%s: endpoint error against %s", task, ab.SweepKey), ab.SweepKey, "rollout error", false, series)
	caption := fmt.Sprintf("Endpoint relL2 and relH1 against %s on %s", ab.SweepKey, task)
	if ab.SweepKey == SweepClaimKey {
		caption = "Fig. training-dynamics (f): " + caption
	}
	b.wrote(path, rel, caption+".", err)
	item := "Fig. training-dynamics"
	b.cover(item, fmt.Sprintf("%s (%s sweep of %s, panel (f))", code(a.file), task, ab.SweepKey))
}
