package datagen

import (
	"fmt"

	"uhno/internal/config"
	"uhno/internal/data/pde"
)

// Generator builds the solver of cfg's task from its pde.* and data.*
// settings (paper App. B; values and choices in configs/<task>.yaml). The
// solver is chosen by the task's equation, so a regime (burgers-shock) runs
// its task's solver (burgers) with its own settings.
func Generator(cfg config.Config) (pde.Generator, error) {
	spec, err := config.LookupTask(cfg.Task)
	if err != nil {
		return nil, fmt.Errorf("datagen: %w", err)
	}
	p, d := cfg.PDE, cfg.Data
	ic := pde.GRFParams{Alpha: p.IC.Alpha, Tau: p.IC.Tau, Sigma: p.IC.Sigma}
	solver1 := func() int {
		if len(p.SolverGrid) > 0 {
			return p.SolverGrid[0]
		}
		return 0
	}
	switch spec.PDE {
	case "burgers":
		return pde.NewBurgers(pde.BurgersParams{Length: p.Domain[0], Grid: p.Grid[0], SolverGrid: solver1(),
			Nu: p.Nu, Dt: p.Dt, TEnd: p.TEnd, Snapshots: d.Snapshots, IC: ic})
	case "ks":
		return pde.NewKS(pde.KSParams{Length: p.Domain[0], Grid: p.Grid[0], SolverGrid: solver1(),
			Dt: p.Dt, TBurn: p.TBurn, TEnd: p.TEnd, Snapshots: d.Snapshots, IC: ic})
	case "kdv":
		return pde.NewKdV(pde.KdVParams{Length: p.Domain[0], Grid: p.Grid[0], SolverGrid: solver1(),
			Dt: p.Dt, TEnd: p.TEnd, Snapshots: d.Snapshots, IC: ic})
	case "adv2d":
		vmin, vmax := velocityRange(p)
		return pde.NewAdv2D(pde.Adv2DParams{Grid: grid2(p.Grid), Domain: dom2(p.Domain),
			VelocityMin: vmin, VelocityMax: vmax, TEnd: p.TEnd, Snapshots: d.Snapshots,
			Alpha: ic.Alpha, Tau: ic.Tau, Sigma: ic.Sigma})
	case "ac2d":
		return pde.NewAC2D(pde.AC2DParams{Grid: grid2(p.Grid), Domain: dom2(p.Domain), Eps: p.Eps,
			Dt: p.Dt, TEnd: p.TEnd, Snapshots: d.Snapshots, Alpha: ic.Alpha, Tau: ic.Tau, Sigma: ic.Sigma})
	case "ns2d":
		return pde.NewNS2D(pde.NS2DParams{Grid: grid2(p.Grid), Domain: dom2(p.Domain), Nu: p.Nu,
			Forcing: p.Forcing, Dt: p.Dt, TEnd: p.TEnd, Snapshots: d.Snapshots,
			Alpha: ic.Alpha, Tau: ic.Tau, Sigma: ic.Sigma})
	case "darcy":
		dp := pde.PDEBenchDarcy(p.Forcing)
		dp.Grid = grid2(p.Grid)
		if len(d.SourceGrid) == 2 {
			dp.SolverGrid = grid2(d.SourceGrid)
		}
		return pde.NewDarcy(dp)
	case "cfd3d":
		return nil, fmt.Errorf("datagen: task cfd3d has no built-in solver; it trains on PDEBench's %s (doi:10.18419/darus-2986): pass it with --pdebench FILE", d.File)
	}
	return nil, fmt.Errorf("datagen: no solver for task %q", cfg.Task)
}

// velocityRange is the per-component range of the advection velocity:
// pde.velocity_range [min, max] draws each component uniformly per
// trajectory; without it pde.velocity fixes c.
func velocityRange(p config.PDE) (vmin, vmax [2]float64) {
	if len(p.VelocityRange) == 2 {
		return [2]float64{p.VelocityRange[0], p.VelocityRange[0]}, [2]float64{p.VelocityRange[1], p.VelocityRange[1]}
	}
	v := dom2(p.Velocity)
	return v, v
}

func grid2(s []int) [2]int {
	var g [2]int
	copy(g[:], s)
	return g
}

func dom2(s []float64) [2]float64 {
	var g [2]float64
	copy(g[:], s)
	return g
}
