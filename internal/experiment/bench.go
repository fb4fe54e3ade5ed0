package experiment

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"

	"uhno/internal/atomicfile"
	"uhno/internal/bench"
	"uhno/internal/config"
	"uhno/internal/cpu"
	"uhno/internal/flagcheck"
	"uhno/internal/model"
	"uhno/internal/progress"
	"uhno/internal/runrec"
	"uhno/internal/tensor"
	"uhno/internal/train"
)

// BenchOptions are the inputs of `uhno bench`.
type BenchOptions struct {
	Env
	// Configure returns the configuration of a task (its built-in file).
	Configure func(task string) (config.Config, error)

	Preset string
	Task   string
	Model  string // "" or a registered model
	Mode   string // "", full or A..I
	Params string // U-HNO parameter budget, "0.62M", or ParamsText
	Width  int    // FNO's width (0: matched to U-HNO's count)
	Batch  int
	Grid   int // points per spatial axis
	// Repeats and Warmup are the timed and discarded iterations.
	Repeats, Warmup int
	Threads         int
	// OpTimes, when > 0, also times that many training steps operation by
	// operation (CPU only; bench.Options.OpTimes).
	OpTimes int
	JSON    string // file, "-" for stdout, "" for none
	Quiet   bool
	// Precision is --precision: "" (the backend's default, float32), fp32,
	// or bf16 (the CUDA backend's autocast; an error on the CPU).
	Precision string
	// Graph is --graph: replay each training step as a recorded CUDA
	// graph, as uhno train does (bench.Options.Graph; no effect on the CPU).
	Graph bool
}

// benchEntry is one row to measure: a model at a task shape.
type benchEntry struct {
	Task  string
	Grid  int // points per spatial axis; 0: the task's pde.grid
	Batch int // 0: the task's optim.batch
	Model string
	Mode  string // "": the task's model.ablation
}

// BenchPreset is a named set of rows.
type BenchPreset struct {
	Name, About string
	Entries     []benchEntry
}

// BenchPresets are the shapes of the paper's cost tables and of the
// Burgers comparison of docs/PERFORMANCE.md. The first is the default.
func BenchPresets() []BenchPreset {
	ns := func(m, mode string) benchEntry { return benchEntry{"ns2d", 128, 16, m, mode} }
	bu := func(m, mode string) benchEntry { return benchEntry{"burgers", 128, 32, m, mode} }
	return []BenchPreset{
		{"burgers", "Burgers, N = 128, batch 32: U-HNO and FNO",
			[]benchEntry{bu("uhno", ""), bu("fno", "")}},
		{"cost-ns2d", "Table cost: NS-2D 128x128, batch 16: U-HNO, FNO, FNO-wider and the six other baselines",
			costModels(ns)},
		{"cost-spar", "Table cost-spar: U-HNO Full (SPAR) against mode F (additive fusion), both shapes above",
			[]benchEntry{ns("uhno", model.ModeFull), ns("uhno", model.ModeNoSPAR), bu("uhno", model.ModeFull), bu("uhno", model.ModeNoSPAR)}},
	}
}

// costModels are the rows of Table cost: U-HNO, FNO, FNO-wider and every
// other baseline uhno builds (not the flat additive hybrid, a diagnostic
// the table does not list).
func costModels(at func(m, mode string) benchEntry) []benchEntry {
	var es []benchEntry
	for _, m := range model.Names() {
		if m != "additive" {
			es = append(es, at(m, ""))
		}
	}
	return es
}

// PresetNames lists the presets' names in order.
func PresetNames() []string {
	var names []string
	for _, p := range BenchPresets() {
		names = append(names, p.Name)
	}
	return names
}

// Bench resolves the rows, measures them one after the other and
// reports.
func Bench(ctx context.Context, opts *BenchOptions) error {
	info := opts.Out // the human-readable part
	if opts.JSON == "-" {
		info = opts.Err
	}
	rep, err := Measure(ctx, opts, info)
	if err != nil {
		return err
	}

	fmt.Fprintln(info)
	if err := bench.WriteTable(info, rep.Results); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := bench.WriteOpTimes(info, rep.Results); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if len(rep.Overheads) > 0 {
		fmt.Fprintln(info, "\nSPAR overhead, Full over mode F (Table cost-spar); in brackets the difference in percent of Full:")
		fmt.Fprintln(info)
		if err := bench.WriteOverheads(info, rep.Overheads); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	if opts.JSON == "" {
		return nil
	}
	raw, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: encoding the report: %w", err)
	}
	raw = append(raw, '\n')
	if opts.JSON == "-" {
		_, err = opts.Out.Write(raw)
		return err
	}
	if err := atomicfile.WriteFile(opts.JSON, raw, 0o644); err != nil {
		return fmt.Errorf("bench: writing --json %s: %w", opts.JSON, err)
	}
	fmt.Fprintf(info, "\nreport in %s\n", opts.JSON)
	return nil
}

// Measure resolves the rows of opts and measures them one after the
// other, printing each row's model to info: the report Bench prints and
// writes, and the step times uhno reproduce --dry-run estimates from.
func Measure(ctx context.Context, opts *BenchOptions, info io.Writer) (*bench.Report, error) {
	preset, entries, err := benchPlan(opts)
	if err != nil {
		return nil, err
	}
	threads := opts.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	// Build every row's model once on the host before measuring any, so
	// that a bad combination fails at once rather than after minutes of
	// timing.
	for _, e := range entries {
		if _, _, err := benchCase(e, opts, cpu.New(1)); err != nil {
			return nil, err
		}
	}
	rep := &bench.Report{Format: bench.ReportFormat, Version: opts.Version, Preset: preset, Host: bench.HostInfo(), Threads: threads,
		FFTFLOPs: fmt.Sprintf("%g N log2 N per real FFT of N points", bench.FFTFlopsPerPoint)}
	for _, e := range entries {
		res, err := benchOne(ctx, e, opts, threads, info)
		if err != nil {
			return nil, err
		}
		rep.Results = append(rep.Results, res)
	}
	rep.Overheads = sparOverheads(rep.Results)
	return rep, nil
}

// benchOne measures one row on a backend of its own (newBackend: the CPU,
// or the GPU in the CUDA build), so that a backend's memory high-water
// mark covers that model alone, and releases the backend.
func benchOne(ctx context.Context, e benchEntry, opts *BenchOptions, threads int, info io.Writer) (res bench.Result, err error) {
	be, closeBackend, err := opts.NewBackend(threads)
	if err != nil {
		return bench.Result{}, fmt.Errorf("bench: %w", err)
	}
	defer func() {
		if cerr := closeBackend(); cerr != nil && err == nil {
			err = fmt.Errorf("bench: %w", cerr)
		}
	}()
	precision, err := benchPrecision(be, opts.Precision)
	if err != nil {
		return bench.Result{}, err
	}
	c, desc, err := benchCase(e, opts, be)
	if err != nil {
		return bench.Result{}, err
	}
	fmt.Fprintf(info, "%s: %s, input %s\n", c.Name, desc, tensor.ShapeString(c.Input))
	bopt := bench.Options{Warmup: opts.Warmup, Repeats: opts.Repeats, Seed: 1, OpTimes: opts.OpTimes, Graph: opts.Graph,
		Optim: tensor.AdamWHyper{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, WeightDecay: 1e-4}}
	if !opts.Quiet {
		bar := progress.New(opts.Err, 1+opts.Warmup+opts.Repeats, progress.Options{Description: c.Name, Unit: "steps"})
		bopt.Progress = func(done, _ int) { bar.Set(done) }
	}
	res, err = bench.Run(ctx, c, bopt)
	res.Precision = precision
	return res, err
}

// benchPrecision sets the backend's precision to --precision p ("": left
// as it is) and returns the precision the bench runs at ("" for a backend
// without a setting: the CPU computes in float32).
func benchPrecision(be tensor.Backend, p string) (string, error) {
	ps, ok := be.(PrecisionSetter)
	switch {
	case p != "" && p != precisionBF16 && p != precisionFP32:
		return "", fmt.Errorf("bench: --precision %q: want bf16 or fp32", p)
	case !ok && p == precisionBF16:
		return "", fmt.Errorf("bench: --precision bf16 needs the CUDA backend (bin/uhno-cuda); the CPU backend computes in float32")
	case !ok:
		return "", nil
	case p != "":
		if err := ps.SetPrecision(p); err != nil {
			return "", fmt.Errorf("bench: %w", err)
		}
	}
	return ps.Precision(), nil
}

// benchPlan checks the flags and returns the preset's name (empty for a
// --task run) and the rows to measure.
func benchPlan(opts *BenchOptions) (string, []benchEntry, error) {
	if err := flagcheck.Check("bench",
		flagcheck.NonNeg("--batch", opts.Batch, "the preset's or the task's"),
		flagcheck.NonNeg("--grid", opts.Grid, "the preset's or the task's"),
		flagcheck.Positive("--repeats", opts.Repeats),
		flagcheck.NonNeg("--warmup", opts.Warmup, ""),
		flagcheck.NonNeg("--op-times", opts.OpTimes, "no operation times"),
		flagcheck.NonNeg("--threads", opts.Threads, "all cores"),
	); err != nil {
		return "", nil, err
	}
	switch {
	case opts.Model != "" && !model.Registered(opts.Model):
		return "", nil, fmt.Errorf("bench: --model %q: want one of %s", opts.Model, strings.Join(model.Names(), ", "))
	case opts.Task != "" && !slices.Contains(config.TaskNames(), opts.Task):
		return "", nil, fmt.Errorf("bench: --task %q: want one of %s", opts.Task, strings.Join(config.TaskNames(), ", "))
	}
	if err := CheckParams(opts.Params); err != nil {
		return "", nil, fmt.Errorf("bench: %w", err)
	}
	mode := model.Mode(opts.Mode).Canonical()
	if mode != "" {
		if !mode.Valid() {
			return "", nil, fmt.Errorf("bench: --mode %q: want full or one of A..I (Tab. ablation-setup)", opts.Mode)
		}
	}

	var name string
	var entries []benchEntry
	if opts.Preset != "" || opts.Task == "" {
		name = cmp.Or(opts.Preset, BenchPresets()[0].Name)
		i := slices.IndexFunc(BenchPresets(), func(p BenchPreset) bool { return p.Name == name })
		if i < 0 {
			return "", nil, fmt.Errorf("bench: --preset %q: want one of %s", opts.Preset, strings.Join(PresetNames(), ", "))
		}
		entries = BenchPresets()[i].Entries
		if opts.Task != "" {
			entries = slices.DeleteFunc(entries, func(e benchEntry) bool { return e.Task != opts.Task })
			if len(entries) == 0 {
				return "", nil, fmt.Errorf("bench: preset %s has no %s rows; drop --preset to measure %s at its own shape", name, opts.Task, opts.Task)
			}
		}
		if name == "cost-spar" && mode != "" {
			return "", nil, fmt.Errorf("bench: --mode does not apply to preset cost-spar, which compares modes full and F")
		}
	} else if opts.Model != "" {
		entries = []benchEntry{{Task: opts.Task, Model: opts.Model}}
	} else {
		entries = []benchEntry{{Task: opts.Task, Model: "uhno"}, {Task: opts.Task, Model: "fno"}}
	}
	if opts.Model != "" {
		entries = slices.DeleteFunc(entries, func(e benchEntry) bool { return e.Model != opts.Model })
		if len(entries) == 0 {
			return "", nil, fmt.Errorf("bench: preset %s has no %s rows: it compares U-HNO's modes full and F", name, opts.Model)
		}
	}
	if mode != "" && opts.Model != "" && !model.TakesMode(opts.Model, mode) {
		return "", nil, fmt.Errorf("bench: --mode %s changes U-HNO's architecture; --model %s takes only the loss modes C, D and E", mode, opts.Model)
	}
	for i := range entries {
		e := &entries[i]
		if mode != "" && model.TakesMode(e.Model, mode) {
			e.Mode = string(mode)
		}
		if opts.Grid > 0 {
			e.Grid = opts.Grid
		}
		if opts.Batch > 0 {
			e.Batch = opts.Batch
		}
	}
	return name, entries, nil
}

// benchCase builds the model of one row on be and describes it. The
// model is sized by the task configuration, scaled to --params and matched
// for FNO by buildModel, as `uhno train` does.
func benchCase(e benchEntry, opts *BenchOptions, be tensor.Backend) (bench.Case, string, error) {
	cfg, err := opts.Configure(e.Task)
	if err != nil {
		return bench.Case{}, "", err
	}
	if e.Mode != "" {
		cfg.Model.Ablation = e.Mode
	}
	if e.Grid > 0 {
		cfg.PDE.Grid = slices.Repeat([]int{e.Grid}, cfg.Dim)
		cfg.PDE.SolverGrid = nil // no data are generated
	}
	if e.Batch > 0 {
		cfg.Optim.Batch = e.Batch
	}
	if err := cfg.Validate(); err != nil {
		return bench.Case{}, "", fmt.Errorf("bench: %s: %w", e.Task, err)
	}
	in, out := Channels(cfg)
	rec := runrec.BuildRecord{Record: model.Record{Model: e.Model}}
	m, desc, err := buildModel(cfg, in, out, modelChoice{opts.Params, opts.Width}, &rec, be)
	if err != nil {
		return bench.Case{}, "", err
	}
	if err := m.CheckGrid(cfg.PDE.Grid); err != nil {
		return bench.Case{}, "", fmt.Errorf("bench: %s at grid %s: %w", e.Task, tensor.ShapeString(cfg.PDE.Grid), err)
	}
	name := cfg.Task + "/" + m.Name()
	switch {
	case rec.Model != "uhno" && rec.Model != m.Name():
		name = cfg.Task + "/" + rec.Model // fno-wider builds an FNO
	case rec.Model == "fno":
		name += fmt.Sprintf(" width=%d", m.(*model.FNO).Spec().Width)
	case rec.Model == "uhno":
		name += fmt.Sprintf(" C0=%d", m.(*model.UHNO).Spec().C0)
	}
	b := cfg.Optim.Batch
	c := bench.Case{Name: name, Task: cfg.Task, Model: m, Backend: be,
		Input: append([]int{b, in}, cfg.PDE.Grid...), Target: append([]int{b, out}, cfg.PDE.Grid...),
		Loss: train.LossConfigFor(cfg)}
	return c, desc, nil
}

// sparOverheads pairs every mode-F U-HNO row with the Full row of the same
// task and batch shape: the SPAR overhead of Table cost-spar.
func sparOverheads(rs []bench.Result) []bench.Overhead {
	var out []bench.Overhead
	for _, f := range rs {
		if f.Model != "uhno-"+model.ModeNoSPAR {
			continue
		}
		for _, full := range rs {
			if full.Model == "uhno" && full.Task == f.Task && slices.Equal(full.Input, f.Input) {
				out = append(out, bench.NewOverhead(full, f))
				break
			}
		}
	}
	return out
}
