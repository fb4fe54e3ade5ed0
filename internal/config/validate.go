package config

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Validate checks c against the task's spec and the paper's constraints and
// returns the first problem as a one-line error that names the key, the
// value and what is allowed. The checks run in a fixed order (task, dim,
// model, pde, data, loss, spar, optim), so the error is stable.
func (c *Config) Validate() error {
	spec, err := LookupTask(c.Task)
	if err != nil {
		return err
	}
	if c.Dim != spec.Dim {
		return bad("dim", c.Dim, "%d (task %s is %dD)", spec.Dim, spec.Name, spec.Dim)
	}
	for _, s := range []struct {
		key string
		v   int64
	}{{"seed", c.Seed}, {"data.seed", c.Data.Seed}} {
		if s.v < 0 {
			return bad(s.key, s.v, ">= 0")
		}
		if s.v > maxSeed {
			return bad(s.key, s.v, "at most %d (2^53 - 1, which a JSON number holds exactly, so that `uhno config --json` reads back)", int64(maxSeed))
		}
	}
	for _, check := range []func(TaskSpec) error{c.validateModel, c.validatePDE, c.validateData, c.validateLoss, c.validateSPAR, c.validateOptim} {
		if err := check(spec); err != nil {
			return err
		}
	}
	return nil
}

// check is one condition: when ok is false, Validate reports key, got and
// want.
type check struct {
	ok   bool
	key  string
	got  any
	want string
}

// firstFailure returns the error of the first failing check, or nil.
func firstFailure(checks ...check) error {
	for _, ch := range checks {
		if !ch.ok {
			return bad(ch.key, ch.got, "%s", ch.want)
		}
	}
	return nil
}

// bad formats the standard one-line validation error.
func bad(key string, got any, format string, args ...any) error {
	return fmt.Errorf("config: key %s: got %s, want %s", key, show(got), fmt.Sprintf(format, args...))
}

// maxLevels bounds model.levels so that 2^levels cannot overflow and every
// level keeps at least one cell on any grid this tool can hold in memory.
const maxLevels = 10

// Upper bounds on sizes. The paper's largest values are 128 cells per axis
// (1024 for a solver grid), 10,000 trajectories, 201 frames and 64
// channels; the bounds lie orders of magnitude above, so they only catch a
// value that is a typo or garbage (1e12 for 1e3). They keep every size the
// data pipeline and the model compute from a configuration (a frame, a
// trajectory, a batch, one level's activations) exact in an int, so such a
// value gives this one-line error instead of an overflow, a panic in
// make() or an allocation no machine can serve.
const (
	// maxAxis bounds the cells per axis of every grid.
	maxAxis = 1 << 16
	// maxCount bounds every count: trajectories, snapshots, the batch,
	// channels, Fourier modes, Gaussian scales, the kernel radius, the
	// optimizer steps (a resumed run replays its batches: Batcher.Skip).
	maxCount = 1 << 24
	// maxValues bounds the values of one frame, one trajectory and one
	// batch of inputs or activations: 2^40 float32 values are 4 TiB.
	maxValues = 1 << 40
)

// maxSeed bounds seed: a JSON reader (viper's) decodes numbers as
// float64, exact up to 2^53.
const maxSeed = 1<<53 - 1

// atMost is the want of a count above maxCount.
var atMost = fmt.Sprintf("at most %d (2^24)", maxCount)

// product returns the product of positive factors and whether it stays
// within limit; it stops before an overflow.
func product(limit int, factors ...int) (int, bool) {
	p := 1
	for _, f := range factors {
		if f < 0 || (f > 0 && p > limit/f) {
			return 0, false
		}
		p *= f
	}
	return p, true
}

func (c *Config) validateModel(TaskSpec) error {
	m := &c.Model
	ablations := make([]string, 0, 10)
	for _, a := range Ablations() {
		ablations = append(ablations, a[0])
	}
	if err := firstFailure(
		check{slices.Contains(ablations, m.Ablation), "model.ablation", m.Ablation, "one of " + strings.Join(ablations, ", ") + " (Tab. ablation-setup)"},
		check{m.Levels >= 1 && m.Levels <= maxLevels, "model.levels", m.Levels, fmt.Sprintf("1..%d", maxLevels)},
		check{m.C0 >= 1, "model.c0", m.C0, ">= 1"},
		check{m.WidthMult >= 1, "model.width_mult", m.WidthMult, ">= 1"},
		check{m.K0 >= 1, "model.k0", m.K0, ">= 1 Fourier mode"},
		check{m.M >= 1, "model.m", m.M, ">= 1 Gaussian scale"},
		check{len(m.Sigmas) == m.M, "model.sigmas", m.Sigmas, fmt.Sprintf("%d values, one per Gaussian scale (model.m)", m.M)},
		check{m.Groups >= 1, "model.groups", m.Groups, ">= 1"},
		check{m.MaxRadius >= 1, "model.max_radius", m.MaxRadius, ">= 1 cell"},
		check{m.ProjHidden >= 1, "model.proj_hidden", m.ProjHidden, ">= 1"},
		check{m.C0 <= maxCount, "model.c0", m.C0, atMost},
		check{m.WidthMult <= maxCount, "model.width_mult", m.WidthMult, atMost},
		check{m.K0 <= maxCount, "model.k0", m.K0, atMost},
		check{m.M <= maxCount, "model.m", m.M, atMost},
		check{m.MaxRadius <= maxCount, "model.max_radius", m.MaxRadius, atMost},
		check{m.ProjHidden <= maxCount, "model.proj_hidden", m.ProjHidden, atMost},
	); err != nil {
		return err
	}
	factors := []int{m.C0}
	for range m.Levels {
		factors = append(factors, m.WidthMult)
	}
	if _, ok := product(maxCount, factors...); !ok {
		return bad("model.width_mult", m.WidthMult, "model.c0 (%d) * width_mult^model.levels (%d) <= %d channels at the coarsest level", m.C0, m.Levels, maxCount)
	}
	for _, s := range m.Sigmas {
		if s <= 0 {
			return bad("model.sigmas", m.Sigmas, "positive widths")
		}
	}
	if m.C0%m.Groups != 0 {
		return bad("model.groups", m.Groups, "a divisor of model.c0 (%d), so every group has the same number of channels", m.C0)
	}
	return c.validateSwitches()
}

// The values of the switches of issue 20 (the first is the default; an
// empty value, as in a configuration written before them, means it).
var (
	DecoderResiduals = []string{"inside", "outside"}
	Upsamples        = []string{"clamp", "periodic"}
	SPARStages       = []string{"all", "encoder", "decoder"}
	SurrogateCentres = []string{"zero", "threshold"}
)

// oneOf checks a switch's value.
func oneOf(key, v string, allowed []string) check {
	return check{v == "" || slices.Contains(allowed, v), key, v, "one of " + strings.Join(allowed, ", ") + " (issue 20; docs/DECISIONS.md)"}
}

// validateSwitches checks the model.* switches of issue 20 and the
// combinations they refuse: periodic up-sampling on a non-periodic
// domain, and SPAR placement for a mode that has no gate at every stage
// of a U.
func (c *Config) validateSwitches() error {
	m := &c.Model
	if err := firstFailure(
		oneOf("model.decoder_residual", m.DecoderResidual, DecoderResiduals),
		oneOf("model.upsample", m.Upsample, Upsamples),
		oneOf("model.spar_stages", m.SPARStages, SPARStages),
	); err != nil {
		return err
	}
	if m.Upsample == "periodic" && c.PDE.Boundary != "periodic" {
		return bad("model.upsample", m.Upsample, "clamp: pde.boundary is %s, and wrapping around needs a periodic domain", c.PDE.Boundary)
	}
	if m.SPARStages != "" && m.SPARStages != "all" {
		switch m.Ablation {
		case "A", "B", "F", "G":
			return bad("model.spar_stages", m.SPARStages, "all with model.ablation %s, which has no SPAR gate at every stage of a U (only full, C, D, E, H, I can take SPAR away from some stages)", m.Ablation)
		}
	}
	return nil
}

// pdeValue is one task-specific pde key: whether it is set, its value, and
// the range its value must lie in when set.
type pdeValue struct {
	key  string
	set  bool
	got  any
	ok   bool
	want string
}

// taskValues lists the task-specific pde keys of c with their range checks.
// The ranges come from the physics: viscosities and time steps are
// positive, the adiabatic index exceeds 1, a Gaussian random field needs
// alpha > d/2 for finite variance.
func (c *Config) taskValues() []pdeValue {
	p := &c.PDE
	return []pdeValue{
		{"pde.solver_grid", len(p.SolverGrid) > 0, p.SolverGrid, true, ""},
		{"pde.nu", p.Nu != 0, p.Nu, p.Nu > 0, "a viscosity > 0"},
		{"pde.eps", p.Eps != 0, p.Eps, p.Eps > 0, "> 0"},
		{"pde.velocity", len(p.Velocity) > 0, p.Velocity, len(p.Velocity) == c.Dim, fmt.Sprintf("%d components, one per axis", c.Dim)},
		{"pde.velocity_range", len(p.VelocityRange) > 0, p.VelocityRange,
			len(p.VelocityRange) == 2 && p.VelocityRange[0] <= p.VelocityRange[1] && len(p.Velocity) == 0,
			"[min, max] with min <= max, and no fixed pde.velocity beside it"},
		{"pde.forcing", p.Forcing != 0, p.Forcing, p.Forcing > 0, "> 0"},
		{"pde.mach", p.Mach != 0, p.Mach, p.Mach > 0, "> 0"},
		{"pde.eta", p.Eta != 0, p.Eta, p.Eta > 0, "a shear viscosity > 0"},
		{"pde.zeta", p.Zeta != 0, p.Zeta, p.Zeta > 0, "a bulk viscosity > 0"},
		{"pde.gamma", p.Gamma != 0, p.Gamma, p.Gamma > 1, "an adiabatic index > 1"},
		{"pde.dt", p.Dt != 0, p.Dt, p.Dt > 0, "a time step > 0"},
		{"pde.t_end", p.TEnd != 0, p.TEnd, p.TEnd > 0, "> 0"},
		{"pde.t_burn", p.TBurn != 0, p.TBurn, p.TBurn > 0, ">= 0"},
		{"pde.ic.kind", p.IC.Kind != "", p.IC.Kind, p.IC.Kind == "grf", `"grf" (Gaussian random field, App. B)`},
		{"pde.ic.alpha", p.IC.Alpha != 0, p.IC.Alpha, p.IC.Alpha > float64(c.Dim)/2, fmt.Sprintf("> %g (dim/2, for a field of finite variance)", float64(c.Dim)/2)},
		{"pde.ic.tau", p.IC.Tau != 0, p.IC.Tau, p.IC.Tau > 0, "> 0"},
		{"pde.ic.sigma", p.IC.Sigma != 0, p.IC.Sigma, p.IC.Sigma > 0, "> 0"},
	}
}

func (c *Config) validatePDE(spec TaskSpec) error {
	p := &c.PDE
	if len(p.Domain) != c.Dim {
		return bad("pde.domain", p.Domain, "%d side lengths, one per axis", c.Dim)
	}
	for _, d := range p.Domain {
		if d <= 0 {
			return bad("pde.domain", p.Domain, "positive side lengths")
		}
	}
	minCells := 1 << c.Model.Levels
	if len(p.Grid) != c.Dim {
		return bad("pde.grid", p.Grid, "%d sizes, one per axis", c.Dim)
	}
	for _, n := range p.Grid {
		if n < minCells {
			return bad("pde.grid", p.Grid, "at least %d cells per axis (2^model.levels, so the coarsest level keeps a cell)", minCells)
		}
		if n > maxAxis {
			return bad("pde.grid", p.Grid, "at most %d cells per axis", maxAxis)
		}
	}
	switch {
	case c.Data.Source == SourceDescribed:
		// A user's file sets it: dirichlet when an axis has walls or is
		// open (one-sided differences there in the H1 loss and the
		// metrics, no wrapped graph edges; D-described-boundary).
		if p.Boundary != "periodic" && p.Boundary != "dirichlet" {
			return bad("pde.boundary", p.Boundary, "periodic or dirichlet (any axis with walls or open ends)")
		}
	case p.Boundary != spec.Boundary:
		return bad("pde.boundary", p.Boundary, "%q (task %s, App. B)", spec.Boundary, spec.Name)
	}
	for _, v := range c.taskValues() {
		uses := slices.Contains(spec.Uses, v.key)
		switch {
		case v.set && !uses:
			return fmt.Errorf("config: key %s: got %s, but task %s does not use it (its pde keys: %s)",
				v.key, show(v.got), spec.Name, strings.Join(spec.Uses, ", "))
		case !v.set && uses && !slices.Contains(spec.Optional, v.key):
			return fmt.Errorf("config: key %s: missing; task %s needs it (App. B)", v.key, spec.Name)
		case v.set && !v.ok:
			return bad(v.key, v.got, "%s", v.want)
		}
	}
	if len(p.SolverGrid) > 0 {
		if len(p.SolverGrid) != c.Dim {
			return bad("pde.solver_grid", p.SolverGrid, "%d sizes, one per axis", c.Dim)
		}
		for i, n := range p.SolverGrid {
			if n > maxAxis {
				return bad("pde.solver_grid", p.SolverGrid, "at most %d cells per axis", maxAxis)
			}
			if n < p.Grid[i] || n%p.Grid[i] != 0 {
				return bad("pde.solver_grid", p.SolverGrid, "multiples of pde.grid %s (the solution is subsampled by an integer stride)", show(p.Grid))
			}
		}
	}
	return nil
}

func (c *Config) validateData(spec TaskSpec) error {
	d := &c.Data
	if d.Source == SourceDescribed {
		// A user's file: its description sets the grid, frames, channels
		// and split (and clears the base task's data.source_grid).
		if spec.Static {
			return bad("data.source", d.Source, "a time-dependent base task (task %s is static)", spec.Name)
		}
		if !strings.HasSuffix(d.File, ".json") {
			return bad("data.file", d.File, "the task description uhno datagen --from wrote (DIR/task.json)")
		}
	} else if len(d.Constants) > 0 {
		return bad("data.constants", d.Constants, "none: constant inputs come from a user's file described by uhno datagen --from (task %s has none)", spec.Name)
	} else if d.Source != spec.Source {
		return bad("data.source", d.Source, "%q (task %s, App. B)", spec.Source, spec.Name)
	} else if d.Source == SourcePDEBench {
		if d.File == "" {
			return fmt.Errorf("config: key data.file: missing; task %s reads a PDEBench file", spec.Name)
		}
		if len(d.SourceGrid) == 0 {
			return fmt.Errorf("config: key data.source_grid: missing; task %s needs the resolution stored in %s", spec.Name, d.File)
		}
	} else {
		if d.File != "" {
			return fmt.Errorf("config: key data.file: got %s, but data.source %q reads no file", show(d.File), d.Source)
		}
		if len(d.SourceGrid) > 0 {
			return fmt.Errorf("config: key data.source_grid: got %s, but data.source %q reads no file (see pde.solver_grid)", show(d.SourceGrid), d.Source)
		}
	}
	if len(d.SourceGrid) > 0 {
		if len(d.SourceGrid) != c.Dim {
			return bad("data.source_grid", d.SourceGrid, "%d sizes, one per axis", c.Dim)
		}
		for i, n := range d.SourceGrid {
			if n > maxAxis {
				return bad("data.source_grid", d.SourceGrid, "at most %d cells per axis", maxAxis)
			}
			if n < c.PDE.Grid[i] || n%c.PDE.Grid[i] != 0 {
				return bad("data.source_grid", d.SourceGrid, "multiples of pde.grid %s (the loader subsamples by an integer stride)", show(c.PDE.Grid))
			}
		}
	}
	for _, f := range []struct {
		key   string
		names []string
	}{{"data.inputs", d.Inputs}, {"data.outputs", d.Outputs}} {
		if len(f.names) == 0 || slices.Contains(f.names, "") {
			return bad(f.key, f.names, "a non-empty list of field names")
		}
		if len(uniq(f.names)) != len(f.names) {
			return bad(f.key, f.names, "distinct field names")
		}
	}
	if err := firstFailure(
		check{d.TrainTrajectories >= 1, "data.train_trajectories", d.TrainTrajectories, ">= 1"},
		check{d.TestTrajectories >= 1, "data.test_trajectories", d.TestTrajectories, ">= 1"},
		check{d.TrainTrajectories <= maxCount, "data.train_trajectories", d.TrainTrajectories, atMost},
		check{d.TestTrajectories <= maxCount, "data.test_trajectories", d.TestTrajectories, atMost},
		check{d.Snapshots <= maxCount, "data.snapshots", d.Snapshots, atMost},
		check{len(d.Inputs) <= maxCount, "data.inputs", len(d.Inputs), fmt.Sprintf("at most %d fields", maxCount)},
		check{len(d.Outputs) <= maxCount, "data.outputs", len(d.Outputs), fmt.Sprintf("at most %d fields", maxCount)},
	); err != nil {
		return err
	}
	if err := c.validateSizes(); err != nil {
		return err
	}
	if spec.Static {
		return firstFailure(
			check{d.Snapshots == 1, "data.snapshots", d.Snapshots, fmt.Sprintf("1 (task %s is static: a -> u)", spec.Name)},
			check{d.History == 1, "data.history", d.History, fmt.Sprintf("1 (task %s is static)", spec.Name)},
			check{d.PairsPerTrajectory == 1, "data.pairs_per_trajectory", d.PairsPerTrajectory, fmt.Sprintf("1 (task %s is static)", spec.Name)},
			check{d.Rollout == 1, "data.rollout", d.Rollout, fmt.Sprintf("1 (task %s is static)", spec.Name)},
		)
	}
	if err := firstFailure(
		check{d.Snapshots >= 2, "data.snapshots", d.Snapshots, ">= 2 frames"},
		check{d.History >= 1 && d.History < d.Snapshots, "data.history", d.History, fmt.Sprintf("1..%d (fewer than data.snapshots)", d.Snapshots-1)},
	); err != nil {
		return err
	}
	left := d.Snapshots - d.History
	if err := firstFailure(
		check{d.PairsPerTrajectory >= 1 && d.PairsPerTrajectory <= left, "data.pairs_per_trajectory", d.PairsPerTrajectory, fmt.Sprintf("1..%d (data.snapshots - data.history)", left)},
		check{d.Rollout >= 1 && d.Rollout <= left, "data.rollout", d.Rollout, fmt.Sprintf("1..%d (data.snapshots - data.history)", left)},
	); err != nil {
		return err
	}
	if c.PDE.Dt > 0 {
		// The solver must land on every snapshot time exactly.
		interval := c.SaveInterval()
		steps := interval / c.PDE.Dt
		if steps < 1-1e-9 || math.Abs(steps-math.Round(steps)) > 1e-6*steps {
			return bad("pde.dt", c.PDE.Dt, "a divisor of the snapshot interval pde.t_end/(data.snapshots-1) = %g", interval)
		}
	}
	return nil
}

// validateSizes checks that one frame and one trajectory of the data hold
// at most maxValues values. The grids and counts are bounded already.
func (c *Config) validateSizes() error {
	d := &c.Data
	for _, g := range []struct {
		key  string
		grid []int
	}{{"pde.grid", c.PDE.Grid}, {"pde.solver_grid", c.PDE.SolverGrid}, {"data.source_grid", d.SourceGrid}} {
		frame, ok := product(maxValues, g.grid...)
		if !ok {
			return bad(g.key, g.grid, "at most %d cells in all (2^40)", maxValues)
		}
		if _, ok := product(maxValues, frame, max(d.Snapshots, 1), max(len(d.Inputs), len(d.Outputs), 1)); !ok {
			return bad("data.snapshots", d.Snapshots, "at most %d values (2^40) per trajectory: frames x %d cells (%s %s) x %d fields",
				maxValues, frame, g.key, show(g.grid), max(len(d.Inputs), len(d.Outputs)))
		}
	}
	return nil
}

func (c *Config) validateLoss(TaskSpec) error {
	return firstFailure(
		check{c.Loss.LambdaH1 >= 0, "loss.lambda_h1", c.Loss.LambdaH1, ">= 0"},
		check{c.Loss.LambdaCBC >= 0, "loss.lambda_cbc", c.Loss.LambdaCBC, ">= 0"},
	)
}

func (c *Config) validateSPAR(TaskSpec) error {
	s := &c.SPAR
	return firstFailure(
		check{s.Rho0 > 0 && s.Rho0 <= 1, "spar.rho0", s.Rho0, "a keep-ratio in (0, 1]"},
		check{s.Beta >= 0 && s.Beta <= 1, "spar.beta", s.Beta, "[0, 1]"},
		check{s.RhoMin > 0 && s.RhoMin <= 1, "spar.rho_min", s.RhoMin, "a keep-ratio in (0, 1]"},
		check{s.RhoMax > 0 && s.RhoMax <= 1, "spar.rho_max", s.RhoMax, "a keep-ratio in (0, 1]"},
		check{s.RhoMin <= s.RhoMax, "spar.rho_min", s.RhoMin, fmt.Sprintf("<= spar.rho_max (%g)", s.RhoMax)},
		check{s.Temperature > 0, "spar.temperature", s.Temperature, "> 0"},
		check{s.Eps > 0, "spar.eps", s.Eps, "> 0"},
		oneOf("spar.surrogate_centre", s.SurrogateCentre, SurrogateCentres),
	)
}

func (c *Config) validateOptim(TaskSpec) error {
	o := &c.Optim
	if err := firstFailure(
		check{o.Name == "adamw", "optim.name", o.Name, `"adamw" (Sec. 4.1)`},
		check{o.LR > 0, "optim.lr", o.LR, "a learning rate > 0"},
		check{o.WeightDecay >= 0, "optim.weight_decay", o.WeightDecay, ">= 0"},
		check{len(o.Betas) == 2, "optim.betas", o.Betas, "2 values [beta1, beta2]"},
		check{o.AdamEps > 0, "optim.adam_eps", o.AdamEps, "> 0"},
		check{o.Steps >= 1, "optim.steps", o.Steps, ">= 1"},
		check{o.Steps <= maxCount, "optim.steps", o.Steps, atMost},
		check{o.Warmup >= 0 && o.Warmup < o.Steps, "optim.warmup", o.Warmup, fmt.Sprintf("0..%d (fewer than optim.steps)", o.Steps-1)},
		check{o.Schedule == "cosine", "optim.schedule", o.Schedule, `"cosine" (Sec. 4.1)`},
		check{o.Batch >= 1, "optim.batch", o.Batch, ">= 1"},
		check{o.Batch <= maxCount, "optim.batch", o.Batch, atMost},
	); err != nil {
		return err
	}
	for _, b := range o.Betas {
		if b < 0 || b >= 1 {
			return bad("optim.betas", o.Betas, "values in [0, 1)")
		}
	}
	pairs := c.Data.TrainTrajectories * c.Data.PairsPerTrajectory
	if o.Batch > pairs {
		return bad("optim.batch", o.Batch, "<= %d, the number of training pairs (data.train_trajectories * data.pairs_per_trajectory)", pairs)
	}
	// The factors are bounded by now (validateModel, validateSizes), so
	// these products cannot overflow before the comparison.
	cells, _ := product(maxValues, c.PDE.Grid...)
	widest := c.Model.C0
	for range c.Model.Levels {
		widest *= c.Model.WidthMult
	}
	if _, ok := product(maxValues, o.Batch, widest, cells); !ok {
		return bad("optim.batch", o.Batch, "at most %d values (2^40) of activations at the widest level: batch x %d channels x pde.grid %s", maxValues, widest, show(c.PDE.Grid))
	}
	if _, ok := product(maxValues, o.Batch, c.Data.History, len(c.Data.Inputs), cells); !ok {
		return bad("optim.batch", o.Batch, "at most %d values (2^40) of inputs: batch x data.history %d x %d fields x pde.grid %s", maxValues, c.Data.History, len(c.Data.Inputs), show(c.PDE.Grid))
	}
	return nil
}

// uniq returns the distinct strings of names, in order.
func uniq(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
