// Package config holds the typed configuration of one uhno task: the PDE and
// its dataset, the U-HNO model, the loss, the SPAR router, the optimizer and
// the seeds: `seed` (initialisation, batch order) and `data.seed` (the
// data: initial conditions, split), apart so that runs of several seeds
// share one data file and test split (docs/DECISIONS.md, D-data-seed).
// Each task's row of Tab. per-task-hp is in its TaskSpec (HP), the size
// `--params text` holds a run to.
//
// A Config is built in layers. Each layer is a map of values keyed by the
// dotted names that Keys lists (for example "optim.lr" or "model.c0"), with
// nested maps allowed ("optim" -> {"lr": ...}). Apply sets a layer's values
// on a Config, checking every key and converting every value strictly: an
// unknown key is an error that names the nearest valid key, and a value of
// the wrong type (a string where an integer is wanted, 32.5 for a channel
// count) is an error that names the key, the value and the wanted type.
// Strings are parsed, so values coming from environment variables and
// command-line flags go through the same checks as YAML values.
//
// Validate then checks the whole Config against the paper's constraints and
// the task's own rules (for example a viscosity only where the PDE has one,
// rho_min <= rho_max, a warmup shorter than the run). All errors are one line
// and start with "config: ".
//
// The package reads no files and no environment and does not import viper:
// the command package reads the sources (built-in YAML, --config file,
// environment, flags) and hands each one to Apply in order of precedence.
//
// # Where a configuration comes from (cmd/uhno)
//
// Each task has a built-in file `configs/<task>.yaml`. It is embedded in the
// binary (package `configs`, `configs.FS`), so `uhno` runs from any directory.
// `cmd/uhno` reads every source with viper. It is the only package that imports
// viper. The sources are applied in rising precedence, key by key:
//
//  1. the built-in file of the task
//  2. `--config FILE` (YAML or JSON, any subset of the keys)
//  3. environment variables `UHNO_<KEY>`, with dots replaced by `_`:
//     `optim.lr` is `UHNO_OPTIM_LR` and `pde.ic.sigma` is `UHNO_PDE_IC_SIGMA`
//  4. `--set key=value` flags, where a later flag wins
//
// The task is chosen first, with the same precedence: `--task`, then
// `UHNO_TASK`, then the file's `task:` key. Its built-in file is the base. A
// lower source cannot change the task, and `--set task=...` is rejected.
// Lists are given as `64,64` or `[64, 64]` in flags and environment variables.
// A list replaces the whole previous list.
//
// The variables in a configuration namespace are `UHNO_TASK`, `UHNO_DIM`,
// `UHNO_SEED`, and anything that starts with `UHNO_PDE_`, `UHNO_DATA_`,
// `UHNO_MODEL_`, `UHNO_LOSS_`, `UHNO_SPAR_` or `UHNO_OPTIM_`. Such a variable
// must name a real key; a typo is an error. Other `UHNO_*` variables, such as a
// future library override, are ignored. Empty variables count as unset.
//
// `uhno config` prints the merged result as YAML (by default) or as JSON. The
// output can be read back with `--config`, and a test checks this round trip
// for every task in both formats.
//
// # Strict decoding and validation
//
// `internal/config` holds the `Config` structs. Their yaml tags are the keys.
// The package does no I/O, and each source reaches it as a map.
//
// `config.Apply` applies one source. It checks every key and converts every
// value strictly. It does not use mapstructure's weak typing, which would
// silently turn `c0: 32.5` into 32. `Config.Validate` then checks the merged
// result. Every error is one line, starts with `config:`, and names the key,
// the value and what is allowed:
//
//   - unknown key: `config: unknown key "optim.lrr" in my.yaml; did you mean "optim.lr"?`
//     The suggestion is one of these, tried in order:
//   - the only key with the same last segment (`model.lr` → `optim.lr`)
//   - the key at the same depth with the smallest Levenshtein distance, if it
//     is within max(2, len/2) edits
//   - wrong type: `config: key model.c0 in --set: got "abc", want an integer`.
//     The message names the source: the file path, `environment` or `--set`.
//   - out of range: `config: key spar.rho_min: got 0.95, want <= spar.rho_max (0.9)`
//   - unknown task: the message lists the eight tasks and suggests the nearest.
//   - a PDE key the task does not use (`pde.nu` for `ks`), or one the task needs
//     but lacks.
//
// Validate checks, among others:
//
//   - `dim` matches the task
//   - grids hold at least 2^levels cells per axis
//   - `c0` is divisible by `groups`
//   - `len(sigmas) == m`
//   - `0 < rho_min <= rho_max <= 1`
//   - `lr > 0` and `warmup < steps`
//   - `batch` ≥ 1 and no larger than the number of training pairs
//   - history, pairs and rollout fit in the snapshots
//   - `pde.dt` divides the snapshot interval exactly
//   - a PDEBench task has a file and a source grid that is a multiple of the
//     model grid
//
// The checks run in a fixed order and the first failure is reported.
//
// # Burgers regimes
//
// Two named built-in configurations run Burgers' equation in other ranges:
// `--task burgers-paper` and `--task burgers-shock` (`uhno --help` lists them
// apart from the paper's eight). A `config.TaskSpec` has a `PDE` field, the
// equation: a paper task's own name, `burgers` for both regimes. The solver
// (`datagen.Generator`) and the pde-key rules go through it, while
// `cfg.Task` keeps the regime's name, so data files
// (`burgers-shock_seed0_n2000_<fingerprint>.h5`), default run directories
// (`runs/burgers-shock-uhno`) and evaluations keep the regimes apart.
// `config.Tasks()` and the paper's tables stay eight; `config.Regimes()`
// holds the two, with no paper column.
//
//	| task | nu | u0 ~ N(0, σ²(−Δ+49)^−2.5) | solver grid, dt | what it is |
//	|---|---|---|---|---|
//	| `burgers` | 0.01 | σ = 7^{5/2} | 1024, 1e-4 | today's: fronts form, then decay; smooth on 128 points |
//	| `burgers-paper` | 0.01 | σ = 7^{3/4} = 4.303517070658851 | 1024, 1e-4 | App. B's prefactor 7^{3/2} read literally as σ²: std ≈ 0.1, damped before a front forms |
//	| `burgers-shock` | 0.001 | σ = 7^{5/2} | 2048, 5e-5 | PDEBench's lowest viscosity: fronts under one saved cell |
//
// Why nu = 0.001 at 2048: a front of jump J is about 4ν/J wide, 0.002–0.004
// for the jumps of this field, a quarter to half a cell of the saved 128-point
// grid and 4–8 cells of 2048 (saved every 16th point). CN/AB2 needs the
// advective number |u| k_max dt ≤ 0.64 with k_max = 2π·2048/3, hence dt =
// 5e-5. Each regime's YAML differs from burgers.yaml only in the commented
// lines, and parses to exactly the float64 values of `--task burgers --set
// pde.nu=0.001 --set pde.solver_grid=2048 --set pde.dt=5e-5` (resp.
// `--set pde.ic.sigma=4.303517070658851`), so files made that way before the
// regimes existed have the same fingerprint and only need renaming
// (`TestRegimeDataMatchesBurgersWithSets`). The solver and its `Attrs()` are
// unchanged.
package config
