package config

import (
	"strings"
	"testing"
)

// builtin returns the validated built-in configuration of task.
func builtin(t *testing.T, task string) Config {
	t.Helper()
	c := builtinConfig(t, task)
	if err := c.Validate(); err != nil {
		t.Fatalf("built-in %s: %v", task, err)
	}
	return c
}

func TestValidateErrors(t *testing.T) {
	tests := []struct {
		name   string
		task   string
		mutate func(c *Config)
		want   string
	}{
		{"unknown task", "burgers", func(c *Config) { c.Task = "burger" },
			`config: unknown task "burger"; valid tasks: burgers, ks, kdv, adv2d, ac2d, ns2d, darcy, cfd3d, burgers-paper, burgers-shock; did you mean "burgers"?`},
		{"dim disagrees with task", "burgers", func(c *Config) { c.Dim = 2 },
			`config: key dim: got 2, want 1 (task burgers is 1D)`},
		{"negative seed", "burgers", func(c *Config) { c.Seed = -1 },
			`config: key seed: got -1, want >= 0`},
		{"negative data seed", "burgers", func(c *Config) { c.Data.Seed = -2 },
			`config: key data.seed: got -2, want >= 0`},
		{"seed beyond a JSON number", "burgers", func(c *Config) { c.Seed = 1 << 53 },
			"config: key seed: got 9007199254740992, want at most 9007199254740991 (2^53 - 1, which a JSON number holds exactly, so that `uhno config --json` reads back)"},

		// model
		{"unknown ablation", "burgers", func(c *Config) { c.Model.Ablation = "Z" },
			`config: key model.ablation: got "Z", want one of full, A, B, C, D, E, F, G, H, I (Tab. ablation-setup)`},
		{"zero levels", "burgers", func(c *Config) { c.Model.Levels = 0 },
			`config: key model.levels: got 0, want 1..10`},
		{"zero channels", "burgers", func(c *Config) { c.Model.C0 = 0 },
			`config: key model.c0: got 0, want >= 1`},
		{"modes below 1", "burgers", func(c *Config) { c.Model.K0 = 0 },
			`config: key model.k0: got 0, want >= 1 Fourier mode`},
		{"sigmas count differs from m", "burgers", func(c *Config) { c.Model.Sigmas = []float64{0.5, 1} },
			`config: key model.sigmas: got [0.5, 1], want 3 values, one per Gaussian scale (model.m)`},
		{"non-positive sigma", "burgers", func(c *Config) { c.Model.Sigmas = []float64{0.5, 0, 2.5} },
			`config: key model.sigmas: got [0.5, 0, 2.5], want positive widths`},
		{"groups do not divide c0", "cfd3d", func(c *Config) { c.Model.Groups = 5 },
			`config: key model.groups: got 5, want a divisor of model.c0 (24), so every group has the same number of channels`},
		{"zero max radius", "burgers", func(c *Config) { c.Model.MaxRadius = 0 },
			`config: key model.max_radius: got 0, want >= 1 cell`},
		{"channels beyond the bound", "burgers", func(c *Config) { c.Model.C0 = 1 << 25 },
			`config: key model.c0: got 33554432, want at most 16777216 (2^24)`},
		{"coarsest level beyond the bound", "burgers", func(c *Config) { c.Model.WidthMult = 1 << 8 },
			`config: key model.width_mult: got 256, want model.c0 (32) * width_mult^model.levels (3) <= 16777216 channels at the coarsest level`},

		// pde
		{"domain of the wrong rank", "ns2d", func(c *Config) { c.PDE.Domain = []float64{1} },
			`config: key pde.domain: got [1], want 2 side lengths, one per axis`},
		{"negative domain", "burgers", func(c *Config) { c.PDE.Domain = []float64{-1} },
			`config: key pde.domain: got [-1], want positive side lengths`},
		{"grid too coarse for the levels", "burgers", func(c *Config) { c.PDE.Grid = []int{4} },
			`config: key pde.grid: got [4], want at least 8 cells per axis (2^model.levels, so the coarsest level keeps a cell)`},
		{"wrong boundary", "darcy", func(c *Config) { c.PDE.Boundary = "periodic" },
			`config: key pde.boundary: got "periodic", want "dirichlet" (task darcy, App. B)`},
		{"negative viscosity", "burgers", func(c *Config) { c.PDE.Nu = -0.01 },
			`config: key pde.nu: got -0.01, want a viscosity > 0`},
		{"missing viscosity", "ns2d", func(c *Config) { c.PDE.Nu = 0 },
			`config: key pde.nu: missing; task ns2d needs it (App. B)`},
		{"viscosity on a task without one", "ks", func(c *Config) { c.PDE.Nu = 0.1 },
			`config: key pde.nu: got 0.1, but task ks does not use it (its pde keys: pde.solver_grid, pde.dt, pde.t_end, pde.t_burn, pde.ic.kind, pde.ic.alpha, pde.ic.tau, pde.ic.sigma)`},
		{"negative eps", "ac2d", func(c *Config) { c.PDE.Eps = -0.01 },
			`config: key pde.eps: got -0.01, want > 0`},
		{"velocity of the wrong rank", "adv2d", func(c *Config) { c.PDE.Velocity = []float64{1} },
			`config: key pde.velocity: got [1], want 2 components, one per axis`},
		{"adiabatic index at most 1", "cfd3d", func(c *Config) { c.PDE.Gamma = 1 },
			`config: key pde.gamma: got 1, want an adiabatic index > 1`},
		{"negative burn-in", "ks", func(c *Config) { c.PDE.TBurn = -5 },
			`config: key pde.t_burn: got -5, want >= 0`},
		{"unknown initial condition", "burgers", func(c *Config) { c.PDE.IC.Kind = "sines" },
			`config: key pde.ic.kind: got "sines", want "grf" (Gaussian random field, App. B)`},
		{"rough random field", "ns2d", func(c *Config) { c.PDE.IC.Alpha = 0.9 },
			`config: key pde.ic.alpha: got 0.9, want > 1 (dim/2, for a field of finite variance)`},
		{"solver grid not a multiple", "burgers", func(c *Config) { c.PDE.SolverGrid = []int{1000} },
			`config: key pde.solver_grid: got [1000], want multiples of pde.grid [128] (the solution is subsampled by an integer stride)`},
		{"time step does not divide the snapshot interval", "ks", func(c *Config) { c.PDE.Dt = 0.03 },
			`config: key pde.dt: got 0.03, want a divisor of the snapshot interval pde.t_end/(data.snapshots-1) = 0.5`},
		{"time step longer than the snapshot interval", "burgers", func(c *Config) { c.PDE.Dt = 0.04 },
			`config: key pde.dt: got 0.04, want a divisor of the snapshot interval pde.t_end/(data.snapshots-1) = 0.02`},

		// data
		{"wrong source", "darcy", func(c *Config) { c.Data.Source = "generated" },
			`config: key data.source: got "generated", want "pdebench" (task darcy, App. B)`},
		{"described data on a static base", "darcy", func(c *Config) { c.Data.Source, c.Data.File = SourceDescribed, "/d/task.json" },
			`config: key data.source: got "described", want a time-dependent base task (task darcy is static)`},
		{"described data without its description", "ns2d", func(c *Config) { c.Data.Source, c.Data.File = SourceDescribed, "/d/data.h5" },
			`config: key data.file: got "/d/data.h5", want the task description uhno datagen --from wrote (DIR/task.json)`},
		{"constant inputs on a built-in task", "ns2d", func(c *Config) { c.Data.Constants = []string{"k"} },
			`config: key data.constants: got ["k"], want none: constant inputs come from a user's file described by uhno datagen --from (task ns2d has none)`},
		{"a described task's boundary", "ns2d", func(c *Config) { c.Data.Source, c.Data.File, c.PDE.Boundary = SourceDescribed, "/d/task.json", "wall" },
			`config: key pde.boundary: got "wall", want periodic or dirichlet (any axis with walls or open ends)`},
		{"missing PDEBench file", "cfd3d", func(c *Config) { c.Data.File = "" },
			`config: key data.file: missing; task cfd3d reads a PDEBench file`},
		{"file on generated data", "burgers", func(c *Config) { c.Data.File = "x.h5" },
			`config: key data.file: got "x.h5", but data.source "generated" reads no file`},
		{"source grid not a multiple", "darcy", func(c *Config) { c.Data.SourceGrid = []int{100, 100} },
			`config: key data.source_grid: got [100, 100], want multiples of pde.grid [64, 64] (the loader subsamples by an integer stride)`},
		{"no outputs", "burgers", func(c *Config) { c.Data.Outputs = nil },
			`config: key data.outputs: got [], want a non-empty list of field names`},
		{"repeated inputs", "cfd3d", func(c *Config) { c.Data.Inputs = []string{"Vx", "Vx"} },
			`config: key data.inputs: got ["Vx", "Vx"], want distinct field names`},
		{"no training trajectories", "burgers", func(c *Config) { c.Data.TrainTrajectories = 0 },
			`config: key data.train_trajectories: got 0, want >= 1`},
		{"trajectories beyond the bound", "burgers", func(c *Config) { c.Data.TrainTrajectories = 1 << 25 },
			`config: key data.train_trajectories: got 33554432, want at most 16777216 (2^24)`},
		{"grid beyond the bound", "burgers", func(c *Config) { c.PDE.Grid = []int{1 << 17} },
			`config: key pde.grid: got [131072], want at most 65536 cells per axis`},
		{"trajectory beyond 2^40 values", "ns2d", func(c *Config) {
			c.PDE.Grid, c.PDE.SolverGrid, c.Data.Snapshots = []int{1 << 16, 1 << 16}, nil, 1<<24
		}, `config: key data.snapshots: got 16777216, want at most 1099511627776 values (2^40) per trajectory: frames x 4294967296 cells (pde.grid [65536, 65536]) x 1 fields`},
		{"history fills the trajectory", "ns2d", func(c *Config) { c.Data.History = 50 },
			`config: key data.history: got 50, want 1..49 (fewer than data.snapshots)`},
		{"rollout past the trajectory", "cfd3d", func(c *Config) { c.Data.Rollout = 21 },
			`config: key data.rollout: got 21, want 1..20 (data.snapshots - data.history)`},
		{"too many pairs", "burgers", func(c *Config) { c.Data.PairsPerTrajectory = 51 },
			`config: key data.pairs_per_trajectory: got 51, want 1..50 (data.snapshots - data.history)`},
		{"static task with a rollout", "darcy", func(c *Config) { c.Data.Rollout = 5 },
			`config: key data.rollout: got 5, want 1 (task darcy is static)`},

		// loss
		{"negative H1 weight", "burgers", func(c *Config) { c.Loss.LambdaH1 = -1e-3 },
			`config: key loss.lambda_h1: got -0.001, want >= 0`},

		// spar
		{"rho_min above rho_max", "burgers", func(c *Config) { c.SPAR.RhoMin = 0.95 },
			`config: key spar.rho_min: got 0.95, want <= spar.rho_max (0.9)`},
		{"keep-ratio above 1", "burgers", func(c *Config) { c.SPAR.RhoMax = 1.5 },
			`config: key spar.rho_max: got 1.5, want a keep-ratio in (0, 1]`},
		{"zero temperature", "burgers", func(c *Config) { c.SPAR.Temperature = 0 },
			`config: key spar.temperature: got 0, want > 0`},

		// optim
		{"unknown optimizer", "burgers", func(c *Config) { c.Optim.Name = "sgd" },
			`config: key optim.name: got "sgd", want "adamw" (Sec. 4.1)`},
		{"zero learning rate", "burgers", func(c *Config) { c.Optim.LR = 0 },
			`config: key optim.lr: got 0, want a learning rate > 0`},
		{"negative learning rate", "burgers", func(c *Config) { c.Optim.LR = -1e-3 },
			`config: key optim.lr: got -0.001, want a learning rate > 0`},
		{"negative weight decay", "burgers", func(c *Config) { c.Optim.WeightDecay = -1 },
			`config: key optim.weight_decay: got -1, want >= 0`},
		{"beta of 1", "burgers", func(c *Config) { c.Optim.Betas = []float64{0.9, 1} },
			`config: key optim.betas: got [0.9, 1], want values in [0, 1)`},
		{"warmup as long as the run", "burgers", func(c *Config) { c.Optim.Warmup = 20000 },
			`config: key optim.warmup: got 20000, want 0..19999 (fewer than optim.steps)`},
		{"unknown schedule", "burgers", func(c *Config) { c.Optim.Schedule = "step" },
			`config: key optim.schedule: got "step", want "cosine" (Sec. 4.1)`},
		{"zero batch", "burgers", func(c *Config) { c.Optim.Batch = 0 },
			`config: key optim.batch: got 0, want >= 1`},
		{"steps beyond the bound", "burgers", func(c *Config) { c.Optim.Steps = 1 << 25 },
			`config: key optim.steps: got 33554432, want at most 16777216 (2^24)`},
		{"batch activations beyond 2^40 values", "burgers", func(c *Config) {
			c.PDE.Grid, c.PDE.SolverGrid, c.Model.C0, c.Optim.Batch = []int{1 << 16}, nil, 1<<14, 50000
		}, `config: key optim.batch: got 50000, want at most 1099511627776 values (2^40) of activations at the widest level: batch x 131072 channels x pde.grid [65536]`},
		{"batch larger than the data", "cfd3d", func(c *Config) { c.Optim.Batch = 2000 },
			`config: key optim.batch: got 2000, want <= 1600, the number of training pairs (data.train_trajectories * data.pairs_per_trajectory)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := builtin(t, tt.task)
			tt.mutate(&c)
			err := c.Validate()
			if err == nil {
				t.Fatalf("Validate returned no error, want %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Fatalf("error\n got: %s\nwant: %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

// TestValidateAcceptsOptionalKeys checks that optional task keys may be left
// out and that valid edits pass.
func TestValidateAcceptsOptionalKeys(t *testing.T) {
	tests := []struct {
		name   string
		task   string
		mutate func(c *Config)
	}{
		{"no solver grid", "burgers", func(c *Config) { c.PDE.SolverGrid = nil }},
		{"no burn-in", "ks", func(c *Config) { c.PDE.TBurn = 0 }},
		{"unforced flow", "ns2d", func(c *Config) { c.PDE.Forcing = 0 }},
		{"an ablation mode", "burgers", func(c *Config) { c.Model.Ablation = "E"; c.Loss.LambdaH1 = 0; c.Loss.LambdaCBC = 0 }},
		{"equal keep-ratio bounds", "burgers", func(c *Config) { c.SPAR.RhoMin = 0.5; c.SPAR.RhoMax = 0.5 }},
		{"no warmup", "burgers", func(c *Config) { c.Optim.Warmup = 0 }},
		{"finer time step", "ks", func(c *Config) { c.PDE.Dt = 0.025 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := builtin(t, tt.task)
			tt.mutate(&c)
			if err := c.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
		})
	}
}

func TestSaveInterval(t *testing.T) {
	tests := []struct {
		task string
		want float64
	}{
		{"burgers", 0.02}, {"ks", 0.5}, {"kdv", 0.2}, {"ns2d", 1.0}, {"ac2d", 0.1}, {"cfd3d", 0.05}, {"darcy", 0},
	}
	for _, tt := range tests {
		c := builtin(t, tt.task)
		if got := c.SaveInterval(); got < tt.want-1e-12 || got > tt.want+1e-12 {
			t.Errorf("%s: SaveInterval() = %g, want %g", tt.task, got, tt.want)
		}
	}
}

// TestValidateSwitches is the table of the switches of issue 20: each
// key's values, its one-line error naming the key, the value and the
// allowed values, and the combinations refused (periodic up-sampling on
// Darcy's Dirichlet domain; SPAR placement for modes without a gate at
// every stage of a U). An empty value, as in a configuration written
// before the switches, is the default.
func TestValidateSwitches(t *testing.T) {
	tests := []struct {
		name   string
		task   string
		mutate func(c *Config)
		want   string // "" = valid
	}{
		{"decoder residual inside", "burgers", func(c *Config) { c.Model.DecoderResidual = "inside" }, ""},
		{"decoder residual outside", "darcy", func(c *Config) { c.Model.DecoderResidual = "outside" }, ""},
		{"decoder residual absent", "burgers", func(c *Config) { c.Model.DecoderResidual = "" }, ""},
		{"decoder residual unknown", "burgers", func(c *Config) { c.Model.DecoderResidual = "both" },
			`config: key model.decoder_residual: got "both", want one of inside, outside (issue 20; docs/DECISIONS.md)`},
		{"upsample periodic on a periodic task", "ns2d", func(c *Config) { c.Model.Upsample = "periodic" }, ""},
		{"upsample clamp on darcy", "darcy", func(c *Config) { c.Model.Upsample = "clamp" }, ""},
		{"upsample unknown", "burgers", func(c *Config) { c.Model.Upsample = "wrap" },
			`config: key model.upsample: got "wrap", want one of clamp, periodic (issue 20; docs/DECISIONS.md)`},
		{"upsample periodic on darcy", "darcy", func(c *Config) { c.Model.Upsample = "periodic" },
			`config: key model.upsample: got "periodic", want clamp: pde.boundary is dirichlet, and wrapping around needs a periodic domain`},
		{"spar stages encoder", "burgers", func(c *Config) { c.Model.SPARStages = "encoder" }, ""},
		{"spar stages decoder, mode H", "burgers", func(c *Config) { c.Model.SPARStages = "decoder"; c.Model.Ablation = "H" }, ""},
		{"spar stages all, mode F", "burgers", func(c *Config) { c.Model.SPARStages = "all"; c.Model.Ablation = "F" }, ""},
		{"spar stages unknown", "burgers", func(c *Config) { c.Model.SPARStages = "mid" },
			`config: key model.spar_stages: got "mid", want one of all, encoder, decoder (issue 20; docs/DECISIONS.md)`},
		{"spar stages with mode F", "burgers", func(c *Config) { c.Model.SPARStages = "encoder"; c.Model.Ablation = "F" },
			`config: key model.spar_stages: got "encoder", want all with model.ablation F, which has no SPAR gate at every stage of a U (only full, C, D, E, H, I can take SPAR away from some stages)`},
		{"spar stages with mode A", "burgers", func(c *Config) { c.Model.SPARStages = "decoder"; c.Model.Ablation = "A" },
			`config: key model.spar_stages: got "decoder", want all with model.ablation A, which has no SPAR gate at every stage of a U (only full, C, D, E, H, I can take SPAR away from some stages)`},
		{"spar stages with mode B", "burgers", func(c *Config) { c.Model.SPARStages = "decoder"; c.Model.Ablation = "B" },
			`config: key model.spar_stages: got "decoder", want all with model.ablation B, which has no SPAR gate at every stage of a U (only full, C, D, E, H, I can take SPAR away from some stages)`},
		{"spar stages with mode G", "burgers", func(c *Config) { c.Model.SPARStages = "encoder"; c.Model.Ablation = "G" },
			`config: key model.spar_stages: got "encoder", want all with model.ablation G, which has no SPAR gate at every stage of a U (only full, C, D, E, H, I can take SPAR away from some stages)`},
		{"surrogate centre threshold", "cfd3d", func(c *Config) { c.SPAR.SurrogateCentre = "threshold" }, ""},
		{"surrogate centre absent", "burgers", func(c *Config) { c.SPAR.SurrogateCentre = "" }, ""},
		{"surrogate centre unknown", "burgers", func(c *Config) { c.SPAR.SurrogateCentre = "tau" },
			`config: key spar.surrogate_centre: got "tau", want one of zero, threshold (issue 20; docs/DECISIONS.md)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := builtin(t, tt.task)
			tt.mutate(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Fatalf("error\n got: %v\nwant: %s", err, tt.want)
			}
		})
	}
	// The built-in files state every default explicitly.
	for _, task := range TaskNames() {
		c := builtin(t, task)
		if c.Model.DecoderResidual != "outside" || c.Model.Upsample != "clamp" || c.Model.SPARStages != "all" || c.SPAR.SurrogateCentre != "zero" {
			t.Errorf("%s: switches %q %q %q %q, want the defaults", task, c.Model.DecoderResidual, c.Model.Upsample, c.Model.SPARStages, c.SPAR.SurrogateCentre)
		}
	}
}
