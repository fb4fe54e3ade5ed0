// Package pde holds the data-generating solvers of the self-generated
// tasks (paper Appendix B): one file per equation, each verified against an
// exact or independent solution in its tests.
//
// Every solver is a Generator: it produces trajectory i of a dataset
// deterministically from (seed, i), so generation can be split over cores
// and resumed, and the same (seed, i) always gives the same bits.
//
// Every solver is built from one settings struct, Params (grids as
// slices, one entry per axis), by the equation's name: each solver file
// registers its constructor (Register, from init) and New builds it, so
// the configuration is mapped once (internal/datagen) and a new equation
// is its file alone. The time-dependent solvers embed the base of their
// dimension (base.go: line in 1D, box in 2D), which owns the dataset,
// shapes, coordinates, frame checks, the trajectory loop and the shared
// attributes; each solver file keeps its equation, scheme and checks.
//
// Fields are written in the PDEBench layout (GUIDE section 3): a
// time-dependent task stores one dataset "tensor" with per-trajectory shape
// [T, x...]; Darcy stores "nu" (the coefficient a, [x, y]) and "tensor"
// (the solution u, [1, x, y]).
//
// # Schemes and their checks
//
// One file per equation, each a `pde.Generator` that produces trajectory i
// from (seed, i) alone (PCG seeded with both), so generation runs on all
// cores, resumes, and gives the same bits whatever the worker count. Every
// scheme is Fourier pseudo-spectral with the 2/3 de-aliasing rule (modes m ≤
// (n−1)/3) except Darcy; fields are solved on `pde.solver_grid` and saved by
// keeping every k-th point. Each solver is tested against an exact or
// independent solution, and its observed order:
//
//	| task | scheme | step | checked against (measured) |
//	|---|---|---|---|
//	| burgers | Crank–Nicolson viscosity, Adams–Bashforth-2 advection | 1e-4 (paper); 5e-5 for burgers-shock | Cole–Hopf (error 9e-7 with a front of max \|u_x\| ≈ 147); order 2.00 in time; spectral in space; at ν = 0.001 see internal/config, "Burgers regimes" |
//	| ks | ETDRK4, Kassam–Trefethen contour coefficients | 0.05 (paper) | mean conserved to 1e-12; order 3.9–4.0; a 1e-10 perturbation grows at rate 0.06–0.08 (chaos); dt vs dt/2 frames within 2.9e-5 |
//	| kdv | ETDRK4 | 0.002 (paper) | travelling soliton (3e-5 at N = 128, 1.7e-7 at 256); order 4.0; mass and energy conserved to 2e-15 / 2e-10 |
//	| adv2d | exact spectral shift | none | analytic translate (1.1e-14); whole-cell shifts equal np.roll |
//	| ac2d | ETDRK4 | 0.01 | stationary tanh kinks (1.6e-15); energy decreases; order 4.0; 6e-11 from an RK4 reference at 1e-3, where the paper's forward Euler at 1e-4 is 2.5e-5 from it |
//	| ns2d | Crank–Nicolson viscosity, Heun advection and forcing, Courant check per frame (sub-steps above 0.4, error above 0.6) | 0.02 | decaying Taylor–Green (order 2.000); forced steady state; advection term against the analytic u·∇w; frames within 2.3e-5 of dt = 1e-4 over t = 0..49 (`UHNO_LONG_TESTS=1`; the first interval, 6.8e-6, always runs) |
//	| darcy | cell-centred finite volumes on 128², harmonic face means, incomplete-Cholesky CG to 1e-10, every second cell kept | static | manufactured solution (order 1.9–2.0); separable series (order 2.000); SPD matrix; true residual 9e-11 |
//
// Darcy's coefficient follows PDEBench's own generator (the source of the
// paper's Darcy files), not FNO's: a sum of 5 Gaussian bumps with uniform
// centres and widths in [0, 0.5], thresholded at its mean into a = 1 (above)
// and 0.1 (below). PDEBench takes that mean over its whole batch; uhno uses the
// exact expectation so that each sample depends only on its own seed.
// PDEBench reaches the steady state by running the time-dependent problem to
// t = 2 with arithmetic face means; uhno solves the steady problem directly.
// `uhno datagen --task darcy` uses this solver; `--pdebench FILE` trains on
// PDEBench's file instead.
//
// The GRF follows the covariance N(0, σ²(−Δ+τ²)^−α) literally (pointwise
// variance is the sum of the eigenvalues, std 0.103 for σ = 7^{3/2}); FNO's
// Python sampler has twice this variance.
//
// # The burgers-shock regime, verified
//
// Verification at ν = 0.001 (internal/data/pde/burgers_shock_test.go), on
// u0 = sin 2πx + 0.5 sin(4πx + 1.1), which forms a shock at t ≈ 0.085:
//
//   - Cole–Hopf by quadrature, in log-sum-exp form (the exponent spans e^200),
//     cut where the weight is below e^−50 of its maximum. The quadrature is
//     checked against the heat equation's Fourier series at ν = 0.05 (3e-14)
//     and for convergence in dy and in the cut at ν = 0.001 (2e-15).
//   - The regime's scheme (2048 points, dt 5e-5, 128 saved) against it after
//     the shock: 1.67e-6 at t = 0.2, 2.7e-7 at t = 0.4 (relative L2; one-cell
//     slope of the exact front 457). Order in time at t = 0.3 from dt = 1e-4 to
//     2.5e-5: 2.000, 2.000.
//   - On the regime's own random fields, solver grids 2048 and 4096 give saved
//     frames within 5.1e-6 (worst at t = 0.2, as fronts steepen); solving at
//     512 instead of 2048 (a planted bug) differs by 1.6e-2.
//
// `go run ./scripts/bandshares FILE.h5 ...` prints each file's share of
// spectral energy in the thirds of the wavenumbers (the bands of E_b) and its
// largest one-cell jump over the field's range (`eval.SharpnessMeter`). On
// four trajectories of each, all 51 frames: `burgers` 1 − 8e-6 / 7.9e-6 /
// 1.9e-8, jump 0.10 (largest 0.25); `burgers-paper` 1 − 2.6e-7 / 2.5e-7 /
// 1.2e-8, jump 0.035; `burgers-shock` 0.991 / 7.5e-3 / 2.0e-3, jump 0.55
// (largest 0.996).
package pde
