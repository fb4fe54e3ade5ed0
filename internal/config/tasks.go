package config

import (
	"fmt"
	"strings"
)

// Data sources.
const (
	// SourceGenerated marks data made by uhno's own solvers.
	SourceGenerated = "generated"
	// SourcePDEBench marks data read from a PDEBench HDF5 file.
	SourcePDEBench = "pdebench"
	// SourceDescribed marks a user's data file described by `uhno datagen
	// --from` (issue 36): data.file is the task description (task.json),
	// and the task named is the built-in one whose model and training
	// settings the run takes.
	SourceDescribed = "described"
)

// TaskSpec describes what one benchmark task is and which task-specific PDE
// keys it uses. It is fixed by the paper (Sec. 4.1, App. B); a Config for the
// task must agree with it.
type TaskSpec struct {
	// Name is the task's key, e.g. "burgers" or "burgers-shock". It names
	// the built-in configuration, the data files and the default run
	// directory, so it keeps regimes of one equation apart.
	Name string
	// PDE names the equation, and so the solver that generates the data
	// and the rules that check its pde keys: a paper task's own name, or
	// for a regime the name of the task it is a regime of ("burgers").
	PDE string
	// Title is the paper's name for it, e.g. "1D Burgers".
	Title string
	// Summary is a one-line description of the equation and its regime.
	Summary string
	// Dim is the number of spatial dimensions.
	Dim int
	// Static tasks (Darcy) map a coefficient to a solution: no time axis.
	Static bool
	// Source is where the paper takes the data from.
	Source string
	// Boundary is the paper's boundary condition.
	Boundary string
	// Uses lists the task-specific pde keys the task reads (beyond
	// pde.domain, pde.grid and pde.boundary, which every task has).
	Uses []string
	// Optional lists the keys of Uses that may be left unset.
	Optional []string
	// Precision is the precision a run takes by default on a backend with
	// bf16 autocast ("" is float32): "bf16" for 3D-CFD, as the paper
	// trains it (Tab. 3d-config: torch.amp.autocast bf16).
	Precision string
	// PaperMemory is the paper's statement of a training step's memory,
	// which `uhno train --dry-run` prints beside its own plan ("" when
	// the paper gives none).
	PaperMemory string
	// HP is the task's row of Tab. per-task-hp: the U-HNO the paper's
	// text trains (`--params text` holds a configuration to it). A regime
	// has the row of the task it is a regime of.
	HP PaperHP
}

// PaperHP is one row of Tab. per-task-hp (App. C): U-HNO's architecture
// and loss weights for one task, as the paper's text gives them. Every
// baseline is matched to the parameter count of this U-HNO (App. C
// "Baseline Configurations": "by first fixing the U-HNO configuration in
// Table per-task-hp").
type PaperHP struct {
	Levels, C0, K0, M   int     // U-levels L, channels C0, modes K0, local scales M
	LambdaH1, LambdaCBC float64 // loss weights of Eq. (loss)
}

// TextDeviations lists, as "key is X, Tab. per-task-hp gives Y", each
// architectural value of m that differs from the task's row hp (L, C0,
// K0, M): empty when c builds the paper's text's U-HNO.
func (hp PaperHP) TextDeviations(m Model) []string {
	var out []string
	for _, v := range []struct {
		key       string
		got, want int
	}{{"model.levels", m.Levels, hp.Levels}, {"model.c0", m.C0, hp.C0}, {"model.k0", m.K0, hp.K0}, {"model.m", m.M, hp.M}} {
		if v.got != v.want {
			out = append(out, fmt.Sprintf("%s is %d, Tab. per-task-hp gives %d", v.key, v.got, v.want))
		}
	}
	return out
}

// Tasks returns the eight benchmark tasks in the paper's order.
func Tasks() []TaskSpec {
	specs := paperTasks()
	for i := range specs {
		specs[i].PDE = specs[i].Name
	}
	return specs
}

// Regimes returns the built-in regimes: named configurations of a paper
// task's equation in another parameter range (issue 20). Each is a task
// for --task, with its own configs/<name>.yaml, data files and run
// directories, but not a column of the paper's tables.
func Regimes() []TaskSpec {
	burgers, _ := lookup(Tasks(), "burgers")
	regime := func(name, title, summary string) TaskSpec {
		s := burgers
		s.Name, s.Title, s.Summary = name, title, summary
		return s
	}
	return []TaskSpec{
		regime("burgers-paper", "1D Burgers (paper's amplitude)",
			"nu = 0.01, u0's covariance prefactor 7^{3/2} as App. B writes it: smooth, no fronts"),
		regime("burgers-shock", "1D Burgers (shock-forming)",
			"nu = 0.001 (PDEBench's lowest), solved on 2048 points: fronts under one saved cell"),
	}
}

// Regime reports whether s is a regime of another task's equation rather
// than one of the paper's eight tasks.
func (s TaskSpec) Regime() bool { return s.PDE != s.Name }

func paperTasks() []TaskSpec {
	ic := []string{"pde.ic.kind", "pde.ic.alpha", "pde.ic.tau", "pde.ic.sigma"}
	with := func(keys ...string) []string { return append(keys, ic...) }
	return []TaskSpec{
		{Name: "burgers", HP: PaperHP{3, 32, 24, 3, 1e-3, 5e-3}, Title: "1D Burgers", Dim: 1, Source: SourceGenerated, Boundary: "periodic",
			Summary: "u_t + u u_x = nu u_xx on [0,1]: viscous shocks",
			Uses:    with("pde.solver_grid", "pde.nu", "pde.dt", "pde.t_end"), Optional: []string{"pde.solver_grid"}},
		{Name: "ks", HP: PaperHP{3, 32, 32, 3, 1e-3, 5e-3}, Title: "1D Kuramoto-Sivashinsky", Dim: 1, Source: SourceGenerated, Boundary: "periodic",
			Summary: "u_t + u u_x + u_xx + u_xxxx = 0 on [0,64]: spatio-temporal chaos",
			Uses:    with("pde.solver_grid", "pde.dt", "pde.t_end", "pde.t_burn"), Optional: []string{"pde.solver_grid", "pde.t_burn"}},
		{Name: "kdv", HP: PaperHP{3, 32, 24, 3, 1e-3, 5e-3}, Title: "1D Korteweg-de Vries", Dim: 1, Source: SourceGenerated, Boundary: "periodic",
			Summary: "u_t + 6 u u_x + u_xxx = 0 on [0,64]: dispersive waves and solitons",
			Uses:    with("pde.solver_grid", "pde.dt", "pde.t_end"), Optional: []string{"pde.solver_grid"}},
		{Name: "adv2d", HP: PaperHP{3, 32, 12, 3, 1e-3, 3e-3}, Title: "2D Advection", Dim: 2, Source: SourceGenerated, Boundary: "periodic",
			Summary: "u_t + c . grad u = 0 on [0,1]^2: transport, solved by exact shifting",
			Uses:    with("pde.velocity", "pde.velocity_range", "pde.t_end"), Optional: []string{"pde.velocity", "pde.velocity_range"}},
		{Name: "ac2d", HP: PaperHP{3, 32, 12, 3, 1e-3, 5e-3}, Title: "2D Allen-Cahn", Dim: 2, Source: SourceGenerated, Boundary: "periodic",
			Summary: "u_t = eps^2 lap u + u - u^3 on [0,1]^2: moving interfaces",
			Uses:    with("pde.solver_grid", "pde.eps", "pde.dt", "pde.t_end"), Optional: []string{"pde.solver_grid"}},
		{Name: "ns2d", HP: PaperHP{3, 32, 12, 3, 1e-3, 5e-3}, Title: "2D Navier-Stokes", Dim: 2, Source: SourceGenerated, Boundary: "periodic",
			Summary: "vorticity form, nu = 1e-3, forcing 0.1(sin 2pi(x+y) + cos 2pi(x+y)): vortical flow",
			Uses:    with("pde.solver_grid", "pde.nu", "pde.forcing", "pde.dt", "pde.t_end"), Optional: []string{"pde.solver_grid", "pde.forcing"}},
		{Name: "darcy", HP: PaperHP{3, 32, 12, 3, 2e-3, 5e-3}, Title: "2D Darcy", Dim: 2, Static: true, Source: SourcePDEBench, Boundary: "dirichlet",
			Summary: "-div(a grad u) = f on [0,1]^2: static coefficient-to-solution map (PDEBench)",
			Uses:    []string{"pde.forcing"}},
		{Name: "cfd3d", HP: PaperHP{3, 24, 12, 3, 1e-3, 5e-3}, Title: "3D-CFD-M1.0Rand", Dim: 3, Source: SourcePDEBench, Boundary: "periodic",
			Summary:   "compressible Navier-Stokes at Mach 1.0 on [0,1]^3, 5 channels (PDEBench)",
			Uses:      []string{"pde.mach", "pde.eta", "pde.zeta", "pde.gamma", "pde.t_end"},
			Precision: "bf16", PaperMemory: "the paper (Tab. 3d-config): 12.5 GB per GPU at 128^3, C0 24, K0 12, batch 1, bf16 autocast"},
	}
}

// PaperTaskNames returns the names of the paper's eight tasks in its
// order: the columns of its Tabs. main-acc and main-acc-h1.
func PaperTaskNames() []string {
	var names []string
	for _, s := range Tasks() {
		names = append(names, s.Name)
	}
	return names
}

// TaskNames returns the names --task accepts: the paper's eight tasks in
// its order, then the regimes.
func TaskNames() []string {
	specs := append(Tasks(), Regimes()...)
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

func lookup(specs []TaskSpec, name string) (TaskSpec, bool) {
	for _, s := range specs {
		if s.Name == name {
			return s, true
		}
	}
	return TaskSpec{}, false
}

// LookupTask returns the spec of the named task or regime, or an error that
// lists the valid names and suggests the nearest one.
func LookupTask(name string) (TaskSpec, error) {
	if s, ok := lookup(append(Tasks(), Regimes()...), name); ok {
		return s, nil
	}
	names := TaskNames()
	msg := fmt.Sprintf("config: unknown task %q; valid tasks: %s", name, strings.Join(names, ", "))
	if near, ok := Nearest(name, names); ok {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return TaskSpec{}, fmt.Errorf("%s", msg)
}

// Ablations returns the model.ablation values with their meaning (paper
// Tab. ablation-setup), in the paper's order.
func Ablations() [][2]string {
	return [][2]string{
		{"full", "U-shape, dual branch, SPAR, asymmetric decoder, normalized kernel, full loss"},
		{"A", "NoLocal: remove the multi-scale Gaussian branch"},
		{"B", "NoGlobal: remove the Fourier branch"},
		{"C", "NoCBC: lambda_cbc = 0"},
		{"D", "NoH1: lambda_h1 = 0"},
		{"E", "MSE only: lambda_h1 = lambda_cbc = 0"},
		{"F", "NoSPAR: additive concat r = W_o[z_F; z_G] instead of the per-pixel MUX"},
		{"G", "NoUShape: flat stack of hybrid blocks at input resolution"},
		{"H", "SymDec: both decoder branches consume the upsampled bottleneck"},
		{"I", "NoNorm: drop the Gaussian kernel normalization"},
	}
}
