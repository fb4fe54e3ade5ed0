// Package reproduce regenerates the paper's tables (`uhno reproduce`):
// it plans which trainings, evaluations and benches the chosen tables need
// and in which run directories they live, and runs them resumably on top
// of package experiment, which owns training and evaluation. It exists so
// that the paper's 75-run grid is one command rather than a script of
// trainings, evaluations and a report written by hand, and so that the
// grid's bookkeeping (which run is finished, which evaluation current,
// which directory belongs to another experiment) is experiment's one
// implementation (experiment.RunState, Eval's SkipCurrent, Ablate), not a
// copy.
//
// The plan is derived from the paper's tables as transcribed in package
// report, so a table's rows and columns are written down once: a cell is
// planned wherever the paper prints a value (and, for the accuracy tables,
// for every model and task asked for, so a dash in the paper does not hide
// a model from the comparison).
//
// Planning is pure (Plan); Run trains, evaluates, benches and reports.
// A whole-grid run evaluates each task when its last run is trained and
// rewrites the report then (interim), so a grid of days reports each
// column as soon as it can; the finish evaluates what is not current yet,
// benches and writes the final report.
// A grid of independent trainings is a job array: RunOptions.Cell K
// trains run K alone, so any scheduler can run the cells (WriteSlurm
// writes a Slurm script), and RunOptions.Finish evaluates and reports
// once every cell is done. Layout: <out>/<task>/<model>; ablation modes
// at <out>/<task>/ablate/<mode> with <task>/ablate/full a link to ../uhno
// (Full trained once; docs/DECISIONS.md, D-reproduce-layout);
// <task>/eval, <task>/eval-4x, <out>/bench, <out>/report. Schedules:
// Schedules (D-reproduce-cpu5k).
//
// Training seeds (Options.Seeds, --seeds 0,1,2) are an axis of the grid:
// every cell is planned once per seed on one data file (a seed changes the
// initialisation and the batch order, never the data: D-data-seed); seed
// 0's runs keep the layout above, so a one-seed grid's runs are reused,
// and seed s's live under <task>/seed<s>/. Each seed's evaluation is then
// merged into <task>/eval-seeds (eval.MergeSeeds: per cell the mean over
// seeds, the spread and a bootstrap over seeds and paired trajectories,
// ranked by seed means; D-seeds). The parameter protocol is
// RunOptions.Params: "0.62M" scales U-HNO to the tables' budget, "text"
// builds Tab. per-task-hp exactly; either way every baseline is matched
// to that U-HNO's count within 10% (App. C; experiment.ParamsTarget).
// A grid over a subset of models keeps, in a task's evaluation, the
// finished runs its previous evaluation held (keep.go, D-reproduce-keep),
// so asking for one model's seeds does not drop another's rows.
package reproduce

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"uhno/internal/config"
	"uhno/internal/model"
	"uhno/internal/report"
)

// Table names the command accepts, in the paper's order: the paper's
// \label without "tab:". Each selects one or two of report's tables.
var TableNames = []string{"main-acc", "main-acc-h1", "stability", "spectral", "fno-wider", "ablation-extra", "cost"}

// Models are the paper's eight models of Tab. main-acc, by uhno's model
// names, in the paper's row order (U-HNO last, as the paper prints it):
// the table's rows through the model registry's paper names.
var Models = rowModels(&report.MainAcc)

// Modes are the ablation modes of Tab. ablation-extra besides Full.
var Modes = []string{"A", "B", "C", "D", "E", "F", "G", "H", "I"}

// Options select the part of the grid to plan.
type Options struct {
	// Tables, Tasks and Models restrict the grid; empty means all.
	Tables, Tasks, Models []string
	// CFD3D is true when a PDEBench 3D-CFD file is available; without
	// it the cfd3d cells are listed in Grid.Missing, not planned.
	CFD3D bool
	// Seeds are the training seeds (--seeds): every cell is planned once
	// per seed, all on the same data (data.seed; D-data-seed). Empty: seed
	// 0 alone, as the configuration has it. Seed 0's runs keep the grid's
	// layout (<task>/<model>), so a one-seed grid's runs are reused;
	// seed s's live under <task>/seed<s>/.
	Seeds []int64
	// Modes restricts Tab. ablation-extra's modes (--modes: letters,
	// ranges and lists as uhno ablate reads them; empty: all nine). Full
	// is always trained (it is the U-HNO run).
	Modes string
}

// seedDir is where seed's runs and evaluations of task live: <task> for
// seed 0, <task>/seed<s> otherwise.
func seedDir(task string, seed int64) string {
	if seed == 0 {
		return task
	}
	return fmt.Sprintf("%s/seed%d", task, seed)
}

// Cell is one training of the grid (its index in Grid.Runs is its cell
// number).
type Cell struct {
	Task  string
	Model string // uhno's model name: "uhno", "fno", ..., "fno-wider"
	Mode  string // ablation mode "A".."I", or "" for the full model
	Seed  int64  // the training seed (Options.Seeds)
	// Dir is the run directory relative to the grid's output:
	// <task>/<model>, or <task>/ablate/<mode> for an ablation mode (the
	// layout of uhno ablate, whose Full is <task>/ablate/full, a link to
	// ../uhno made by Run); under <task>/seed<s>/ for a seed s > 0.
	Dir string
	// Tables are the tables that need this run, in TableNames order.
	Tables []string
}

// Name is the run's label: the model name, or uhno-<mode>.
func (r Cell) Name() string {
	if r.Mode != "" {
		return "uhno-" + r.Mode
	}
	return r.Model
}

// Eval is one side-by-side evaluation of a task's runs.
type Eval struct {
	Task string
	// HorizonMult is the rollout horizon in units of the training
	// horizon: 1, or 4 for Tab. stability.
	HorizonMult int
	// Runs are the run directories evaluated together.
	Runs []string
	// Dir is the evaluation's output directory, relative: <task>/eval
	// or <task>/eval-4x (under <task>/seed<s>/ for a seed s > 0).
	Dir string
	// Seed is the training seed of the runs evaluated.
	Seed int64
}

// Merge is one evaluation over training seeds: the per-seed evaluations
// of a task at one horizon (Evals, in Seeds order) merged into Dir
// (<task>/eval-seeds or <task>/eval-4x-seeds) by eval.MergeSeeds; the
// report reads the merge in their place.
type Merge struct {
	Task        string
	HorizonMult int
	Seeds       []int64
	Evals       []string
	Dir         string
}

// Grid is a planned reproduction: the runs in a fixed order (a run's
// index is its cell number), the evaluations, the benches of Tab. cost
// and what could not be planned.
type Grid struct {
	Tables []string
	Runs   []Cell
	Evals  []Eval
	// Bench lists the models Tab. cost times on NS-2D, empty if cost
	// was not asked for.
	Bench []string
	// Missing says, per cell left out, why (e.g. the 3D-CFD file).
	Missing []string
	// Seeds are the training seeds planned, Merges the evaluations over
	// them (none for one seed).
	Seeds  []int64
	Merges []Merge
}

// selected returns want ∩ all in all's order, all if want is empty or
// "all", and an error naming the first unknown entry.
func selected(what string, want, all []string) ([]string, error) {
	if len(want) == 0 || (len(want) == 1 && want[0] == "all") {
		return slices.Clone(all), nil
	}
	for _, w := range want {
		if !slices.Contains(all, w) {
			return nil, fmt.Errorf("--%s: unknown %q; expected all or a comma-separated list of %s", what, w, strings.Join(all, ", "))
		}
	}
	var out []string
	for _, a := range all {
		if slices.Contains(want, a) {
			out = append(out, a)
		}
	}
	return out, nil
}

// taskColumns returns the tasks a paper table has columns for, in order
// ("burgers/mse" counts for burgers).
func taskColumns(t *report.Table) []string {
	var out []string
	for _, c := range t.Columns {
		task, _, _ := strings.Cut(c, "/")
		if slices.Contains(config.PaperTaskNames(), task) && !slices.Contains(out, task) {
			out = append(out, task)
		}
	}
	return out
}

// rowModels returns the models of a paper table's rows (model.ByPaperName;
// a row of no registered model is left out).
func rowModels(t *report.Table) []string {
	var out []string
	for _, r := range t.Rows {
		if m, ok := model.ByPaperName(r.Key); ok {
			out = append(out, m)
		}
	}
	return out
}

// ablationModes reads --modes (model.ParseModes) as Tab.
// ablation-extra's modes besides Full, in the paper's order; empty: all.
func ablationModes(spec string) ([]string, error) {
	if spec == "" {
		return slices.Clone(Modes), nil
	}
	ms, err := model.ParseModes(spec)
	if err != nil {
		return nil, fmt.Errorf("--modes: %w", err)
	}
	var out []string
	for _, m := range ms {
		if m != model.ModeFull {
			out = append(out, string(m))
		}
	}
	return out, nil
}

// ablationTasks are the tasks Tab. ablation-extra's modes are planned
// for: the table's columns and, when --modes is given, every other task
// named in --tasks (not "all"), as the accuracy tables plan every task
// asked for: a user who names a task and the modes wants its ablation,
// paper values or not (the report says the paper has none). Without
// --modes a grid keeps the paper's ablation columns only, so naming a
// task for its accuracy columns does not add nine trainings.
func ablationTasks(want []string, modes string) []string {
	out := taskColumns(&report.AblationExtra)
	if modes == "" || (len(want) == 1 && want[0] == "all") {
		return out
	}
	for _, t := range config.TaskNames() {
		if slices.Contains(want, t) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// regimes are the tasks of tasks that are not paper columns (a regime of
// a paper equation, such as burgers-shock), in order.
func regimes(tasks []string) []string {
	var out []string
	for _, t := range tasks {
		if !slices.Contains(config.PaperTaskNames(), t) {
			out = append(out, t)
		}
	}
	return out
}

// Plan works out the runs, evaluations and benches the chosen tables
// need. It touches no file.
func Plan(o Options) (*Grid, error) {
	tables, err := selected("tables", o.Tables, TableNames)
	if err != nil {
		return nil, err
	}
	// "all" is the paper's columns; a regime (burgers-shock) is planned
	// when named.
	taskList := config.TaskNames()
	if len(o.Tasks) == 0 || (len(o.Tasks) == 1 && o.Tasks[0] == "all") {
		taskList = config.PaperTaskNames()
	}
	tasks, err := selected("tasks", o.Tasks, taskList)
	if err != nil {
		return nil, err
	}
	models, err := selected("models", o.Models, append(slices.Clone(Models), "fno-wider"))
	if err != nil {
		return nil, err
	}
	modes, err := ablationModes(o.Modes)
	if err != nil {
		return nil, err
	}
	seeds, err := planSeeds(o.Seeds)
	if err != nil {
		return nil, err
	}
	g := &Grid{Tables: tables, Seeds: seeds}
	byDir := map[string]int{}
	add := func(task, model, mode, table string) {
		if !slices.Contains(tasks, task) || !slices.Contains(models, model) {
			return
		}
		r := Cell{Task: task, Model: model, Mode: mode, Dir: task + "/" + model}
		if mode != "" {
			r.Dir = ablateDir(task, 0) + "/" + mode
		}
		if task == "cfd3d" && !o.CFD3D {
			msg := fmt.Sprintf("%s (%s) needs PDEBench's 3D-CFD file (--pdebench FILE)", r.Dir, table)
			if !slices.Contains(g.Missing, msg) {
				g.Missing = append(g.Missing, msg)
			}
			return
		}
		if i, ok := byDir[r.Dir]; ok {
			if !slices.Contains(g.Runs[i].Tables, table) {
				g.Runs[i].Tables = append(g.Runs[i].Tables, table)
			}
			return
		}
		r.Tables = []string{table}
		byDir[r.Dir] = len(g.Runs)
		g.Runs = append(g.Runs, r)
	}
	for _, tb := range tables {
		switch tb {
		case "main-acc", "main-acc-h1", "stability", "spectral":
			t := map[string]*report.Table{"main-acc": &report.MainAcc, "main-acc-h1": &report.MainAccH1,
				"stability": &report.Stability, "spectral": &report.Spectral}[tb]
			cols := taskColumns(t)
			if tb == "main-acc" || tb == "main-acc-h1" {
				cols = append(cols, regimes(tasks)...) // ours only: the paper has no such column
			}
			for _, task := range cols {
				for _, m := range Models {
					add(task, m, "", tb)
				}
			}
		case "fno-wider":
			for _, task := range taskColumns(&report.FNOWider) {
				for _, m := range rowModels(&report.FNOWider) {
					add(task, m, "", tb)
				}
			}
		case "ablation-extra":
			for _, task := range ablationTasks(o.Tasks, o.Modes) {
				add(task, "uhno", "", tb)
				for _, mode := range modes {
					add(task, "uhno", mode, tb)
				}
			}
		case "cost":
			for _, m := range rowModels(&report.Cost) {
				if slices.Contains(models, m) {
					g.Bench = append(g.Bench, m)
				}
			}
		}
	}
	g.Runs = perSeed(g.Runs, seeds)
	sortCells(g.Runs, seeds)
	planEvals(g)
	if len(g.Runs) == 0 && len(g.Bench) == 0 {
		return nil, fmt.Errorf("the grid is empty: tables %s have no cell among tasks %s and models %s",
			strings.Join(tables, ","), strings.Join(tasks, ","), strings.Join(models, ","))
	}
	return g, nil
}

// planSeeds checks --seeds: distinct seeds >= 0; none is seed 0 alone.
func planSeeds(given []int64) ([]int64, error) {
	seeds := slices.Clone(given)
	if len(seeds) == 0 {
		seeds = []int64{0}
	}
	for i, sd := range seeds {
		if sd < 0 || slices.Contains(seeds[:i], sd) {
			return nil, fmt.Errorf("--seeds: %d: want distinct seeds >= 0, such as 0,1,2", sd)
		}
	}
	return seeds, nil
}

// sortCells puts the runs in a stable order: by seed in the order given,
// then task in the paper's order (regimes after), then models in the
// paper's order, then modes; the index is the cell number (seed 0 first
// keeps a one-seed grid's numbers).
func sortCells(runs []Cell, seeds []int64) {
	rank := func(r Cell) (int, int, int) {
		mi := slices.Index(Models, r.Model)
		if mi < 0 {
			mi = len(Models)
		}
		return slices.Index(config.TaskNames(), r.Task), mi, slices.Index(Modes, r.Mode)
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if si, sj := slices.Index(seeds, runs[i].Seed), slices.Index(seeds, runs[j].Seed); si != sj {
			return si < sj
		}
		ai, aj, ak := rank(runs[i])
		bi, bj, bk := rank(runs[j])
		if ai != bi {
			return ai < bi
		}
		if aj != bj {
			return aj < bj
		}
		return ak < bk
	})
}

// perSeed is one copy of every cell of base (seed 0's layout) per seed,
// seed s's under <task>/seed<s>/.
func perSeed(base []Cell, seeds []int64) []Cell {
	var out []Cell
	for _, sd := range seeds {
		for _, r := range base {
			r.Seed = sd
			r.Tables = slices.Clone(r.Tables)
			r.Dir = seedDir(r.Task, sd) + strings.TrimPrefix(r.Dir, r.Task)
			out = append(out, r)
		}
	}
	return out
}

// planEvals plans g's evaluations: one per task and seed over all its
// runs but the ablation modes (evaluated by uhno ablate's pipeline) at
// the training horizon, and one at 4x over the stability runs; with
// several seeds, each task's evaluations at one horizon merged over the
// seeds (Merge).
func planEvals(g *Grid) {
	seeds := g.Seeds
	for _, task := range config.TaskNames() {
		merges := map[int]*Merge{}
		for _, sd := range seeds {
			var all, stab []string
			for _, r := range g.Runs {
				if r.Task != task || r.Seed != sd || r.Mode != "" { // the modes: Ablate's evaluation
					continue
				}
				all = append(all, r.Dir)
				if slices.Contains(r.Tables, "stability") {
					stab = append(stab, r.Dir)
				}
			}
			for _, e := range []Eval{{Task: task, HorizonMult: 1, Runs: all, Dir: seedDir(task, sd) + "/eval", Seed: sd},
				{Task: task, HorizonMult: 4, Runs: stab, Dir: seedDir(task, sd) + "/eval-4x", Seed: sd}} {
				if len(e.Runs) == 0 {
					continue
				}
				g.Evals = append(g.Evals, e)
				if len(seeds) > 1 {
					m := merges[e.HorizonMult]
					if m == nil {
						m = &Merge{Task: task, HorizonMult: e.HorizonMult, Dir: strings.TrimPrefix(e.Dir, seedDir(task, sd)+"/")}
						m.Dir = task + "/" + m.Dir + "-seeds"
						merges[e.HorizonMult] = m
					}
					m.Seeds, m.Evals = append(m.Seeds, sd), append(m.Evals, e.Dir)
				}
			}
		}
		for _, mult := range []int{1, 4} {
			if m := merges[mult]; m != nil {
				g.Merges = append(g.Merges, *m)
			}
		}
	}
}
