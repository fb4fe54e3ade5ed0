// Package experiment runs uhno's experiments: one training run (fresh,
// resumed, or one rank of a data-parallel run), the evaluation of runs
// side by side (results.json, results.md, figures), an ablation or a
// sweep (training and evaluating every entry under one schedule), a
// prediction from one's own initial conditions, the dry runs' plans (of
// one run, and of an ablation with what its directory holds already) and
// the cost benchmark's presets.
//
// It is the layer that composes internal/train, internal/eval,
// internal/dynamics, internal/bench, internal/data and internal/predict,
// and it sits below cmd/uhno only: cmd/uhno parses flags, reads the
// configuration (viper is cmd's alone) and calls Train, Eval, Ablate,
// Predict, DryRun, AblateDryRun or Bench with a plain options struct. Arrows point
// down: nothing below imports this package. The logic lives here, not in
// package main, so that it is tested directly (the tests build options
// structs, no binary and no flag parsing) and so that a new command that
// composes training and evaluation (an ablation, a sweep, the paper's
// table grid) calls the same functions instead of copying them; only the
// tests of a real process (signals, SIGKILL, mpirun, the one-writer lock
// with frozen processes) stay in cmd/uhno.
//
// What the command supplies through Env: where to print, the version,
// and the backend of its build (CPU, CUDA, emulator). What it supplies
// through Configure functions: a fresh run's configuration (a resume
// takes its checkpoint's). Every model is planned and built through
// internal/model's registry; a checkpoint's runrec.BuildRecord holds the
// model's {model, spec} record (model.Record, older records upgraded on
// read) beside the data file, its fingerprint, the normalisation
// statistics, the run control and the precision.
//
// An evaluation reads the test split of the run's own data, or, with
// EvalOptions.TestData (`uhno eval --test-data`), every trajectory of a
// longer file from the same solver (evaldata.go: checked attribute by
// attribute and by frame spacing, normalised with the run's statistics);
// StabilityData plans such a file for Tab. stability where a task's data
// are too short for 4x the horizon (Burgers), and internal/reproduce
// makes it.
//
// Errors are one line and name the command ("eval: checkpoint ...":
// AsCommand rewords internal/train's "train: " for eval, ablate and
// predict). Files other programs read (results.json, ablation.json,
// results.md) are written through internal/atomicfile.
package experiment
