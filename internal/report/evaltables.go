package report

import (
	"cmp"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"uhno/internal/eval"
	"uhno/internal/model"
	"uhno/internal/runrec"
)

// paperKeys maps each evaluated model to the paper's row: U-HNO (mode
// full), FNO, FNO-wider for an FNO of at least 2.5 times the parameters
// of the smallest FNO beside it (the paper's is 5x), and the six other
// baselines' rows. Ablated U-HNOs have no row in the main tables ("").
func paperKeys(ms []eval.ResultsModel) []string {
	nFNO, minFNO := 0, 0
	for _, m := range ms {
		if m.Model == "fno" {
			if nFNO++; minFNO == 0 || m.Params < minFNO {
				minFNO = m.Params
			}
		}
	}
	keys := make([]string, len(ms))
	for i, m := range ms {
		switch m.Model {
		case "uhno":
			keys[i] = KeyUHNO
		case "fno":
			keys[i] = KeyFNO
			if nFNO > 1 && float64(m.Params) >= 2.5*float64(minFNO) {
				keys[i] = KeyFNOWider
			}
		default:
			keys[i] = model.PaperName(m.Model)
		}
	}
	return keys
}

// metricCol is one metric column of a table built from an evaluation,
// with the paper's column beside it (paper nil: ours only).
type metricCol struct {
	metric string // eval metric name, or "crash"
	head   string
	paper  *Table
	col    string
}

// value is our value of a metric ("crash": the crash rate), and whether
// the evaluation has it.
func value(s eval.Summary, metric string) (eval.Interval, bool) {
	if metric == "crash" {
		if s.CrashRate == nil {
			return eval.Interval{Mean: math.NaN()}, false
		}
		return *s.CrashRate, true
	}
	iv, ok := s.Metrics[metric]
	if !ok {
		return eval.Interval{Mean: math.NaN()}, false
	}
	return iv, true
}

// crashedAll reports whether every test trajectory of an evaluation
// crashed (its rollout metrics are then empty).
func crashedAll(s eval.Summary) bool {
	return s.CrashRate != nil && s.CrashRate.N > 0 && s.CrashRate.Mean == 1
}

// rollValue is value for a rollout metric as the tables and the ranking
// use it: a model that crashed on every trajectory ranks behind every
// finite value (+Inf), and its cell says so; a model that crashed on some
// has its mean over the others, and the cell says over how many.
// ok is value's: whether the evaluation holds the metric at all.
func rollValue(s eval.Summary, metric string) (iv eval.Interval, cell string, ok bool) {
	iv, ok = value(s, metric)
	if metric == "crash" || s.CrashRate == nil || s.CrashRate.N == 0 || s.CrashRate.Mean == 0 {
		return iv, ours(iv), ok
	}
	if crashedAll(s) {
		inf := math.Inf(1)
		return eval.Interval{Mean: inf, Low: inf, High: inf}, fmt.Sprintf("crashed (%d of %d trajectories)", s.CrashRate.N, s.CrashRate.N), ok
	}
	c := s.CrashRate
	return iv, fmt.Sprintf("%s over the %d of %d trajectories that did not crash", ours(iv), c.N-int(math.Round(c.Mean*float64(c.N))), c.N), ok
}

// by is how far behind a value is: the ratio, or that the model behind
// (named) crashed on every trajectory.
func by(behind, ahead float64, name string) string {
	if math.IsInf(behind, 1) {
		return name + "'s crashes"
	}
	return ratio(behind, ahead)
}

// oursRank formats one of our values in a ranking statement.
func oursRank(iv eval.Interval) string {
	if math.IsInf(iv.Mean, 1) {
		return "crashed on every trajectory"
	}
	return ours(iv)
}

// evalSections writes the tables built from evaluations.
func (b *builder) evalSections(evals []evalInput) {
	if len(evals) == 0 {
		return
	}
	evals = slices.Clone(evals)
	slices.SortStableFunc(evals, func(x, y evalInput) int {
		return cmp.Or(cmp.Compare(taskOrder(x.res.Task), taskOrder(y.res.Task)), cmp.Compare(x.res.HorizonMult, y.res.HorizonMult))
	})
	// A task evaluated at the paper's horizon of a table is shown only at
	// that horizon there: x1 for Tab. main-acc, main-acc-h1 and spectral,
	// x4 for Tab. stability. An evaluation at another horizon fills a
	// table only where the task has none at the paper's.
	atHorizon := map[string]map[int]bool{}
	for _, e := range evals {
		if atHorizon[e.res.Task] == nil {
			atHorizon[e.res.Task] = map[int]bool{}
		}
		atHorizon[e.res.Task][e.res.HorizonMult] = true
	}
	shown := func(e evalInput, paperMult int) bool {
		return e.res.HorizonMult == paperMult || !atHorizon[e.res.Task][paperMult]
	}
	b.printf("## Accuracy (Tab. main-acc, Tab. main-acc-h1)\n\n")
	first := true // the first table of each file lists its checkpoints
	var listed []string
	for _, e := range evals {
		if !shown(e, 1) {
			continue
		}
		first = !slices.Contains(listed, e.file)
		listed = append(listed, e.file)
		b.evalTable(e, "Tab. main-acc", "rollout relL2", []metricCol{{eval.MetricRelL2, "relL2", &MainAcc, e.paperColumn()}}, true, first)
		b.evalTable(e, "Tab. main-acc-h1", "rollout relH1", []metricCol{{eval.MetricRelH1, "relH1", &MainAccH1, e.paperColumn()}}, true, false)
	}
	b.printf("## Long-horizon stability (Tab. stability)\n\n")
	for _, e := range evals {
		if !shown(e, 4) {
			continue
		}
		first = !slices.Contains(listed, e.file)
		listed = append(listed, e.file)
		if e.res.Models[0].Eval.Static {
			b.printf("Task %s (%s) is a single prediction: no rollout, so no stability table.\n\n", e.res.Task, code(e.file))
			continue
		}
		t := e.paperColumn()
		b.evalTable(e, "Tab. stability", "stability", []metricCol{
			{eval.MetricMSE, "MSE", &Stability, t + "/mse"},
			{eval.MetricEnergyDrift, "E-drift", &Stability, t + "/energy_drift"},
			{"crash", "crash", &Stability, t + "/crash"}}, false, first)
	}
	b.printf("## Spectral fidelity (Tab. spectral)\n\n")
	b.printf("E_b two ways (docs/DECISIONS.md, D-band-pooled): *pooled*, one ratio of sums over every frame and trajectory, " +
		"the one compared with the paper's values (no near-empty frame dominates it); and *per-frame*, " +
		"each frame's ratio averaged over the frames and then the trajectories, where frames with almost no energy in a band dominate. " +
		"Pooled values are n/a in evaluations made before uhno computed them.\n\n")
	for _, e := range evals {
		if !shown(e, 1) {
			continue
		}
		t := e.paperColumn()
		b.evalTable(e, "Tab. spectral", "spectral error", []metricCol{
			{eval.MetricBandLowPooled, "E_low pooled", &Spectral, t + "/band_low"},
			{eval.MetricBandMidPooled, "E_mid pooled", &Spectral, t + "/band_mid"},
			{eval.MetricBandHighPooled, "E_high pooled", nil, ""},
			{eval.MetricBandLow, "E_low per-frame", nil, ""},
			{eval.MetricBandMid, "E_mid per-frame", nil, ""},
			{eval.MetricBandHigh, "E_high per-frame", nil, ""},
			{eval.MetricSF, "SF", &Spectral, t + "/sf"}}, false, false)
	}
	var wider []evalInput
	for _, e := range evals {
		if shown(e, 1) {
			wider = append(wider, e)
		}
	}
	b.fnoWider(wider)
}

// evalSource writes where an evaluation's numbers come from: the file,
// its settings, the command reconstructed from it and, with checkpoints,
// each checkpoint and its configuration.
func (b *builder) evalSource(e evalInput, checkpoints bool) {
	r := e.res
	bs := r.Models[0].Eval.Bootstrap
	what := fmt.Sprintf("rollout of %d steps (horizon x%d)", r.Steps, r.HorizonMult)
	if r.Models[0].Eval.Static {
		what = "single prediction a -> u"
	}
	command := "not recorded in results.json; reconstructed from it: " + code(evalCommand(e, true))
	if sd := r.Models[0].Eval.Seeds; sd != nil {
		// A merge is no one eval command: the checkpoints results.json
		// names are the first seed's, and where that seed's evaluation was
		// written is not recorded.
		command = fmt.Sprintf("none: `uhno reproduce --seeds` merged the evaluations of seeds %s (eval.MergeSeeds); seed %d's "+
			"evaluation, reconstructed from the checkpoints named here: %s", joinSeeds(sd.Seeds), sd.Seeds[0], code(evalCommand(e, false)))
	}
	b.printf("Source: %s (uhno eval, uhno %s): task %s, %d test trajectories of %s, %s; bootstrap B = %d at %g%%, seed %d. "+
		"Command: %s.\n\n",
		code(e.file), cmp.Or(r.Version, "version not recorded"), r.Task, r.Trajs, code(r.Data), what,
		bs.Resamples, 100*bs.Level, bs.Seed, command)
	if sd := r.Models[0].Eval.Seeds; sd != nil {
		b.printf("**Over training seeds %s** (uhno reproduce --seeds; eval.MergeSeeds of the seeds' evaluations, all on the same data and test trajectories): "+
			"each value is the mean over the seeds of each seed's mean over the trajectories, ranked by it, and its interval a bootstrap over seeds "+
			"and trajectories (eval.SeedBootstrap), so it holds the training variance; the pooled band errors' intervals are over seeds only. "+
			"Each seed's value and the spread between seeds follow each table.\n\n", joinSeeds(sd.Seeds))
	}
	if !checkpoints {
		return
	}
	b.printf("The checkpoints were trained by `uhno train`, which does not record its command line; " +
		"each one's resolved configuration is in results.json and in the checkpoint's state.json:\n\n")
	for _, m := range r.Models {
		c := m.Config
		mode := ""
		if strings.HasPrefix(m.Model, "uhno") {
			mode = ", model.ablation " + c.Model.Ablation + fmt.Sprintf(", model.c0 %d", c.Model.C0)
			if c0, ok := builtC0(m); ok && c0 != c.Model.C0 {
				mode += fmt.Sprintf(" (built with C0 %d: --params scaled it)", c0)
			}
		}
		b.printf("- %s: %s, step %d of optim.steps %d, %d parameters%s, optim.batch %d, optim.lr %g, seed %d\n",
			m.Label, code(m.Checkpoint), m.Step, c.Optim.Steps, m.Params, mode, c.Optim.Batch, c.Optim.LR, c.Seed)
	}
	b.printf("\n")
}

// builtC0 is the width C0 U-HNO model m was built with: the one
// results.json records, else (a file written before it recorded one) the
// one its checkpoint's build record gives, when the checkpoint is still
// there; false when neither says.
func builtC0(m eval.ResultsModel) (int, bool) {
	if m.BuiltC0 > 0 {
		return m.BuiltC0, true
	}
	if _, _, rec, err := runrec.Read(m.Checkpoint); err == nil {
		return rec.UHNOWidth()
	}
	return 0, false
}

// evalCommand reconstructs the uhno eval command line from results.json,
// with --out the file's directory when withOut is set.
func evalCommand(e evalInput, withOut bool) string {
	r := e.res
	args := []string{"uhno", "eval"}
	for _, m := range r.Models {
		args = append(args, "--checkpoint", m.Checkpoint)
	}
	m0 := r.Models[0]
	if !m0.Eval.Static {
		if base := r.Steps / r.HorizonMult; base != m0.Config.Data.Rollout {
			args = append(args, "--rollout", fmt.Sprint(base))
		}
		if r.HorizonMult != 1 {
			args = append(args, "--horizon-mult", fmt.Sprint(r.HorizonMult))
		}
	}
	if r.Trajs > 0 && r.Trajs < m0.Config.Data.TestTrajectories {
		args = append(args, "--trajectories", fmt.Sprint(r.Trajs))
	}
	if bs := m0.Eval.Bootstrap; bs.Resamples != eval.DefaultResamples && bs.Resamples > 0 {
		args = append(args, "--resamples", fmt.Sprint(bs.Resamples))
	}
	if bs := m0.Eval.Bootstrap; bs.Seed != 0 {
		args = append(args, "--seed", fmt.Sprint(bs.Seed))
	}
	if withOut {
		args = append(args, "--out", filepath.Dir(e.file))
	}
	return shellJoin(args)
}

// shellJoin joins arguments into a command line, quoting those that need
// it.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		if a == "" || strings.ContainsAny(a, " \t'\"$&;|<>()*?[]#~`\\!{}") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// evalTable writes one table of an evaluation: per model our value of
// each metric beside the paper's, then what the comparison says.
// withRatio adds the ratio and interval columns (one-metric tables);
// checkpoints adds the checkpoints' details to the source.
func (b *builder) evalTable(e evalInput, item, what string, cols []metricCol, withRatio, checkpoints bool) {
	r := e.res
	task := r.Task
	var paperTab *Table // the paper's table, when it has this task
	for _, c := range cols {
		if c.paper != nil && slices.Contains(c.paper.Columns, c.col) {
			paperTab = c.paper
		}
	}
	if paperTab == nil { // ours only
		cols = slices.Clone(cols)
		for i := range cols {
			cols[i].paper = nil
		}
		withRatio = false
	}
	b.printf("### %s, %s (%s)\n\n", item, taskTitle(task), what)
	b.evalSource(e, checkpoints)
	keys := paperKeys(r.Models)

	heads := []string{"model (ours)", "paper row"}
	for _, c := range cols {
		if c.paper == nil {
			heads = append(heads, c.head+", ours")
			continue
		}
		heads = append(heads, c.head+", ours", c.head+", paper")
	}
	if withRatio {
		heads = append(heads, "ours / paper", "paper's value in our interval")
	}
	b.printf("| %s |\n|%s\n", strings.Join(heads, " | "), strings.Repeat("---|", len(heads)))
	var outside []string
	for i, m := range r.Models {
		row := []string{m.Label, cmp.Or(keys[i], "—")}
		for _, c := range cols {
			iv, cell, _ := rollValue(m.Eval, c.metric)
			row = append(row, cell)
			if c.paper == nil {
				continue
			}
			p, ok := c.paper.Get(keys[i], c.col)
			row = append(row, paperCell(p, ok))
			if ok && !math.IsNaN(iv.Mean) && !math.IsInf(iv.Mean, 0) {
				if withRatio {
					in := "no"
					if inside(iv, p) {
						in = "yes"
					}
					row = append(row, ratio(iv.Mean, p.Mean), in)
				}
				if !inside(iv, p) {
					outside = append(outside, fmt.Sprintf("%s %s (ours / paper %s)", m.Label, c.head, ratio(iv.Mean, p.Mean)))
				}
			} else if withRatio {
				row = append(row, "—", "—")
			}
		}
		b.printf("| %s |\n", strings.Join(row, " | "))
	}
	b.printf("\n")

	b.seedLines(e, cols)
	b.evalNotes(e, item, paperTab, keys, cols, outside)
}

// seedLines writes, for an evaluation merged over seeds, each model's
// value at every seed and the spread between them, per column.
func (b *builder) seedLines(e evalInput, cols []metricCol) {
	sd := e.res.Models[0].Eval.Seeds
	if sd == nil {
		return
	}
	for _, c := range cols {
		var parts []string
		for _, m := range e.res.Models {
			s := m.Eval.Seeds
			if s == nil || len(s.Means[c.metric]) == 0 {
				continue
			}
			vals := make([]string, len(s.Means[c.metric]))
			for i, v := range s.Means[c.metric] {
				vals[i] = num(v)
			}
			parts = append(parts, fmt.Sprintf("%s %s (spread %s)", m.Label, strings.Join(vals, " / "), num(s.Spread(c.metric))))
		}
		if len(parts) > 0 {
			b.printf("- %s per seed (%s): %s.\n", c.head, joinSeeds(sd.Seeds), strings.Join(parts, "; "))
		}
	}
	b.printf("\n")
}

// joinSeeds writes seeds as "0, 1, 2".
func joinSeeds(seeds []int64) string {
	out := make([]string, len(seeds))
	for i, s := range seeds {
		out[i] = fmt.Sprint(s)
	}
	return strings.Join(out, ", ")
}

// evalNotes writes what an evaluation table says against the paper's
// (paperTab, nil when it has no column for the task): the horizon
// caveats, the values outside our intervals, the rankings (rankNotes)
// and crash rates the paper does not have; it also records the table as
// covered.
func (b *builder) evalNotes(e evalInput, item string, paperTab *Table, keys []string, cols []metricCol, outside []string) {
	r := e.res
	task := e.paperColumn()
	where := fmt.Sprintf("%s, %s (%s)", item, task, e.file)
	// like: this evaluation is at the horizon of the paper's table, so a
	// different order is a contradiction; otherwise it is only reported.
	paperMult := 1
	if item == "Tab. stability" {
		paperMult = 4
	}
	like := r.HorizonMult == paperMult
	var notes []string
	switch {
	case paperTab == nil && e.described:
		notes = append(notes, fmt.Sprintf("A user's data file (uhno datagen --from, %s): the paper has no values for it, ours only.", code(r.Data)))
	case paperTab == nil:
		notes = append(notes, fmt.Sprintf("The paper's %s has no %s column: ours only.", item, task))
	case item == "Tab. stability" && r.HorizonMult != 4:
		notes = append(notes, fmt.Sprintf("The paper's Tab. stability is at 4x the training horizon; this evaluation is at x%d (%d steps), "+
			"so the values are not like for like (`uhno eval --horizon-mult 4` gives the paper's setting).", r.HorizonMult, r.Steps))
	case item != "Tab. stability" && r.HorizonMult != 1:
		notes = append(notes, fmt.Sprintf("This evaluation is at x%d the training horizon (%d steps); the paper's %s is at the training horizon.", r.HorizonMult, r.Steps, item))
	}
	if paperTab != nil {
		if !slices.ContainsFunc(keys, func(k string) bool { return k != "" && paperTab.RowName(k) != "" }) {
			notes = append(notes, fmt.Sprintf("None of these models has a row in the paper's %s.", item))
		}
		if len(outside) > 0 {
			notes = append(notes, "The paper's value lies outside our 95% interval for: "+strings.Join(outside, "; ")+".")
		}
		for _, c := range cols {
			if c.paper == nil {
				continue
			}
			var es []rankEntry
			for i, m := range r.Models {
				iv, _, ok := rollValue(m.Eval, c.metric)
				p, has := c.paper.Get(keys[i], c.col)
				if ok && has {
					es = append(es, rankEntry{label: m.Label, key: keys[i], ours: iv, paper: p})
				}
			}
			notes = append(notes, b.rankNotes(rankGroup{item: item, task: task, file: e.file, metric: c.head, seeds: evalSeeds(r)}, es, like)...)
			if c.metric == "crash" {
				for _, e := range es {
					if e.ours.Mean > e.paper.High {
						what := fmt.Sprintf("%s crashes on %s of its test trajectories (Wilson %s); the paper's %s crashes on none (%s).",
							e.label, num(e.ours.Mean), ours(e.ours), e.key, paperCell(e.paper, true))
						if like {
							notes = append(notes, b.contradict(where, what))
						} else {
							notes = append(notes, notLike+what)
						}
					}
				}
			}
		}
		b.cover(item, fmt.Sprintf("%s (%s)", code(e.file), task))
	} else {
		b.cover(item, fmt.Sprintf("%s (%s, ours only: no paper column)", code(e.file), task))
	}
	for _, n := range notes {
		b.printf("- %s\n", n)
	}
	if len(notes) > 0 {
		b.printf("\n")
	}
}

// rankEntry is one model in a ranking check.
type rankEntry struct {
	label, key string
	ours       eval.Interval
	paper      Value
}

// rankNotes compares the order of every pair of models the paper ranks
// (different rows, different values; lower is better) with ours, and
// says where ours reverses it. With like (the evaluation is at the
// paper's horizon for the table) each reversal is a contradiction and the
// group's counts enter the report's summary; otherwise the reversals are
// only reported.
func (b *builder) rankNotes(g rankGroup, es []rankEntry, like bool) []string {
	where := fmt.Sprintf("%s, %s (%s)", g.item, g.task, g.file)
	var notes, agree []string
	for i := range es {
		for j := i + 1; j < len(es); j++ {
			x, y := es[i], es[j]
			if x.key == y.key || x.paper.Mean == y.paper.Mean || math.IsNaN(x.ours.Mean) || math.IsNaN(y.ours.Mean) {
				continue
			}
			g.pairs++
			if x.paper.Mean > y.paper.Mean { // x: the paper's better one
				x, y = y, x
			}
			if x.ours.Mean <= y.ours.Mean {
				agree = append(agree, fmt.Sprintf("%s ahead of %s", x.key, y.key))
				continue
			}
			g.reversed++
			res := "our intervals do not overlap, so the reversal is resolved at 95%"
			if g.seeds == "" {
				res += " for these runs (intervals over the test trajectories of one training run per model, without training variance)"
			} else {
				res += " over training seeds " + g.seeds
			}
			if !disjoint(x.ours, y.ours) {
				res = "but our intervals overlap, so ours does not resolve the order at 95%"
			} else {
				g.resolved = append(g.resolved, fmt.Sprintf("%s ahead of %s (%s)", y.key, x.key, by(x.ours.Mean, y.ours.Mean, x.key)))
			}
			what := fmt.Sprintf("in %s the paper ranks %s (%s) ahead of %s (%s); ours ranks %s (%s) ahead of %s (%s), by %s; %s.",
				g.metric, x.key, paperNum(x.paper.Mean), y.key, paperNum(y.paper.Mean),
				y.label, oursRank(y.ours), x.label, oursRank(x.ours), by(x.ours.Mean, y.ours.Mean, x.label), res)
			if like {
				notes = append(notes, b.contradictDetail(where, what))
			} else {
				notes = append(notes, notLike+what)
			}
		}
	}
	if len(agree) > 0 {
		notes = append(notes, fmt.Sprintf("Agrees with the paper's order in %s: %s.", g.metric, strings.Join(agree, ", ")))
	}
	if like && g.pairs > 0 {
		b.ranks = append(b.ranks, g)
	}
	return notes
}

// notLike prefixes a difference from the paper found in an evaluation at
// another horizon than the paper's table: reported, not counted.
const notLike = "Differs from the paper (at another horizon than the paper's table, so not counted as a contradiction): "

// rankGroup counts, for one table, task and metric, the pairs of models
// the paper orders and how ours orders them.
type rankGroup struct {
	item, task, file, metric string
	// seeds are the training seeds the evaluation merges ("0, 1, 2"),
	// empty for one training run per model: what "resolved" resolves.
	seeds           string
	pairs, reversed int
	resolved        []string // "A ahead of B (ratio)", ours' better first
}

// scope says what the group's intervals are over: seeds and trajectories
// (a merge over training seeds), or the test trajectories of one
// training run per model, which hold no training variance.
func (g rankGroup) scope() string {
	if g.seeds != "" {
		return "seeds " + g.seeds + " and trajectories"
	}
	return "trajectories, one run"
}

// evalSeeds are the training seeds an evaluation merges, "" for none.
func evalSeeds(r eval.Results) string {
	if len(r.Models) > 0 && r.Models[0].Eval.Seeds != nil {
		return joinSeeds(r.Models[0].Eval.Seeds.Seeds)
	}
	return ""
}

// kendall is Kendall's tau-a between the paper's order and ours over the
// compared pairs: 1 when every pair agrees, -1 when every pair is reversed.
func (g rankGroup) kendall() float64 {
	return float64(g.pairs-2*g.reversed) / float64(g.pairs)
}

// fnoWider writes Tab. fno-wider from the Burgers and 3D-CFD evaluations
// that hold U-HNO and FNO.
func (b *builder) fnoWider(evals []evalInput) {
	var use []evalInput
	for _, e := range evals {
		keys := paperKeys(e.res.Models)
		if !e.described && (e.res.Task == "burgers" || e.res.Task == "cfd3d") && slices.Contains(keys, KeyUHNO) && slices.Contains(keys, KeyFNO) {
			use = append(use, e)
		}
	}
	if len(use) == 0 {
		return
	}
	b.printf("## Latency-matched FNO (Tab. fno-wider)\n\n")
	for _, e := range use {
		t := e.res.Task
		keys := paperKeys(e.res.Models)
		b.printf("### Tab. fno-wider, %s\n\n", taskTitle(t))
		b.evalSource(e, false)
		b.printf("| model (ours) | paper row | params (M), ours | params (M), paper | relL2, ours | relL2, paper | relH1, ours | relH1, paper |\n|---|---|---|---|---|---|---|---|\n")
		var l2, h1 []rankEntry
		for i, m := range e.res.Models {
			k := keys[i]
			if FNOWider.RowName(k) == "" { // no row in Tab. fno-wider (the other baselines, ablations)
				continue
			}
			pp, okp := FNOWider.Get(k, ColParams)
			row := []string{m.Label, k, num(float64(m.Params) / 1e6), paperCell(pp, okp)}
			for _, c := range []struct {
				metric string
				es     *[]rankEntry
			}{{eval.MetricRelL2, &l2}, {eval.MetricRelH1, &h1}} {
				iv, _ := value(m.Eval, c.metric)
				p, ok := FNOWider.Get(k, t+"/"+c.metric)
				row = append(row, ours(iv), paperCell(p, ok))
				if ok {
					*c.es = append(*c.es, rankEntry{label: m.Label, key: k, ours: iv, paper: p})
				}
			}
			b.printf("| %s |\n", strings.Join(row, " | "))
		}
		b.printf("\nInference times are in the cost section (Tab. cost) when a bench JSON is given; the paper's are 1.2 ms (FNO), 3.9 ms (FNO-wider) and 4.0 ms (U-HNO).\n\n")
		like := e.res.HorizonMult == 1
		if !like {
			b.printf("This evaluation is at x%d the training horizon (%d steps); the paper's Tab. fno-wider is at the training horizon.\n\n", e.res.HorizonMult, e.res.Steps)
		}
		g := rankGroup{item: "Tab. fno-wider", task: t, file: e.file, seeds: evalSeeds(e.res)}
		g2 := g
		g.metric, g2.metric = "relL2", "relH1"
		notes := append(b.rankNotes(g, l2, like), b.rankNotes(g2, h1, like)...)
		if !slices.Contains(keys, KeyFNOWider) {
			notes = append(notes, "This evaluation has no wider FNO (an FNO with at least 2.5x the parameters of the other FNO counts as FNO-wider; the paper's has width 56, `uhno train --model fno --width 56`).")
		}
		for _, n := range notes {
			b.printf("- %s\n", n)
		}
		b.printf("\n")
		b.cover("Tab. fno-wider", fmt.Sprintf("%s (%s)", code(e.file), t))
	}
}
