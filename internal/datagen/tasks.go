package datagen

import (
	"fmt"

	"uhno/internal/config"
	"uhno/internal/data/pde"
)

// Generator builds the solver of cfg's task from its pde.* and data.*
// settings (paper App. B; values and choices in configs/<task>.yaml):
// the solver registered for the task's equation (pde.Register, in each
// solver's file) on the settings as Params. A regime (burgers-shock) runs
// its equation's solver (burgers) with its own settings. A task without a
// registered solver trains on a file (data.file) and says so.
func Generator(cfg config.Config) (pde.Generator, error) {
	spec, err := config.LookupTask(cfg.Task)
	if err != nil {
		return nil, fmt.Errorf("datagen: %w", err)
	}
	if !pde.Registered(spec.PDE) {
		if cfg.Data.File != "" {
			return nil, fmt.Errorf("datagen: task %s has no built-in solver; it trains on PDEBench's %s (doi:10.18419/darus-2986): pass it with --pdebench FILE", cfg.Task, cfg.Data.File)
		}
		return nil, fmt.Errorf("datagen: no solver for task %q (equation %q; registered: %v)", cfg.Task, spec.PDE, pde.Equations())
	}
	return pde.New(spec.PDE, Params(cfg))
}

// Params maps a configuration onto the solvers' settings: one mapping for
// every task (pde.Params names the keys).
func Params(cfg config.Config) pde.Params {
	p, d := cfg.PDE, cfg.Data
	vmin, vmax := velocityRange(p)
	return pde.Params{
		Domain: p.Domain, Grid: p.Grid, SolverGrid: p.SolverGrid,
		Snapshots: d.Snapshots, TEnd: p.TEnd, TBurn: p.TBurn, Dt: p.Dt,
		IC: pde.GRFParams{Alpha: p.IC.Alpha, Tau: p.IC.Tau, Sigma: p.IC.Sigma},
		Nu: p.Nu, Eps: p.Eps, Forcing: p.Forcing,
		VelocityMin: vmin, VelocityMax: vmax,
		SourceGrid: d.SourceGrid,
	}
}

// velocityRange is the per-component range of the advection velocity:
// pde.velocity_range [min, max] draws each component uniformly per
// trajectory; without it pde.velocity fixes c (nil bounds for a task
// without a velocity).
func velocityRange(p config.PDE) (vmin, vmax []float64) {
	if len(p.VelocityRange) == 2 {
		for range p.Grid {
			vmin = append(vmin, p.VelocityRange[0])
			vmax = append(vmax, p.VelocityRange[1])
		}
		return vmin, vmax
	}
	return p.Velocity, p.Velocity
}
