// Package dynamics records and draws the training-dynamics diagnostics of
// the paper (Sec. "Training Dynamics", Fig. training-dynamics, App.
// "Training Dynamics Details"): the per-band rollout error, the SPAR
// routing-logit contrast and keep-ratio per level, the branch-gradient
// angle, and the loss terms, over training.
//
// # Recording
//
// NewProbe returns a train.Probe that `uhno train` runs every
// --dynamics-every steps (default 1,000, the paper's 200; see "Cost and
// cadence" below; internal/experiment/dynamics.go): the
// model being trained is rolled out with eval.Rollout on the first
// --dynamics-trajectories (128) test trajectories of the run's split for
// the task's rollout length, with the normalisation, the physical units,
// the metric grid and the crash rule of `uhno eval`, and the result goes
// into the run's log.jsonl as one line:
//
//	{"kind":"probe","step":200,"probe":"dynamics","probe_s":1.3,"elapsed_s":14.2,"value":{
//	  "trajectories":128,"rollout_steps":25,"crashed":0,
//	  "band":[0.35,1.2e10,3.9e11],"band_horizon":[...],"band_steps":[[l,m,h], ... 25 of them],
//	  "rel_l2":0.53,"rel_l2_horizon":0.81,
//	  "stages":["enc.0","enc.1","enc.2","mid","dec.2","dec.1","dec.0"],
//	  "contrast":[[c of trajectory 1, ..., 128], ... one list per stage],
//	  "rho":[[...], ...],
//	  "rho_range":[0.1,0.9]}}
//
// Record documents each field. band is E_b of App. "Evaluation Metrics"
// (low, mid, high thirds of the spectrum) averaged over the rollout steps
// of each trajectory and then over the trajectories that did not crash,
// exactly the band_low/mid/high of `uhno eval`'s tables; band_steps keeps
// the per-step curve. contrast and rho are the per-sample statistics of
// the rollout's first forward pass (the trajectories' initial frames)
// read from model.Aux.Stats as the rollout runs, so they cost no extra
// pass. Models without SPAR routing (FNO, modes A, B, F) write no
// stages, contrast, rho or rho_range. Static tasks (Darcy) record the
// single prediction a -> u: rollout_steps 1, "static": true. Undefined
// means (every trajectory crashed) are JSON null.
//
// The branch-gradient angle of panel (c) is another probe's record,
// {"kind":"probe","probe":"angle","step":1000,"value":{"degrees":[...]}}
// (AngleRecord; a bare array of degrees is read too), which this package
// reads and draws but does not compute.
//
// The training records ("kind":"train" every --log-every steps, with the
// unweighted loss terms loss, mse, h1, cbc, the learning rate and the
// batch means of rho and contrast per stage; "kind":"val") are those of
// package train, unchanged.
//
// # Reading and drawing
//
// Read(logPath) parses a log into a Series (the loss, dynamics and angle
// records; malformed lines are errors naming the file and line; a torn
// last line of a run still writing is skipped). Figures(dir, runs) draws
// the figure's panels from one or more runs as PNG files (see Figures for
// the list and the file names): (a) E_b per band and relL2 against the
// step, raw thin and EMA bold (App. "Smoothing", weight 0.9); (b) the
// contrast histograms per routing stage as step × c heat maps; (c) the
// angle histograms; (d) the mean keep-ratio per stage inside the shaded
// [rho_min, rho_max]; (e) the loss terms of several runs (Full against
// mode E) with EMA. Panel (f) of the figure (endpoint relH1 against
// rho_0) is a sweep of trained runs, not a training-time record, and is
// not drawn here.
//
// Both functions are the package's stable entry points for `uhno eval`
// and `uhno report`:
//
//	s, err := dynamics.Read(filepath.Join(runDir, train.LogFile))
//	files, err := dynamics.Figures(figDir, []dynamics.Run{{Label: "Full", Series: s}, ...})
//
// # In the training run: what, when, at what cost
//
//   - What is recorded. The `dynamics` probe rolls the current model out on
//     the first `--dynamics-trajectories` (128, the paper's batch) test
//     trajectories for the task's rollout length with `eval.Rollout` (the
//     normalisation, units, metric grid and crash rule of `uhno eval`), and
//     records E_b per band (panel (a)), relL2, and from the rollout's first
//     forward the per-sample SPAR contrast c and keep-ratio rho of every
//     routing stage (panels (b) and (d)), with [rho_min, rho_max]. The loss
//     terms of panel (e) are the ordinary train records. For `--model
//     additive` an `angle` probe records `model.BranchAngles` on the first 64
//     validation pairs (panel (c), Fig. motivation (b)).
//   - Probes do not change training. They run between steps on their own
//     tape, draw nothing from the training RNG, and the loop clears the
//     gradient buffer after them; a run with probes ends with bit-identical
//     weights and optimizer state to one without (tested in internal/train
//     and in `TestTrainDynamics`). Interrupted during a probe, the resume runs
//     it again on the checkpoint's weights, so the log is the uninterrupted
//     run's.
//   - Cadence: 1,000 steps by default, not the paper's 200. Measured on
//     the 2-core CPU machine (Burgers, `--params 0.62M`, a 25-step rollout of
//     128 trajectories): one record costs 1.2-2.2 s against a step of 60-95
//     ms, about 10-12% of a run at the paper's 200 (the probe's own timer in
//     two 1,000-step runs: 10.7% and 9.9%; the benchmark
//     `UHNO_BENCH_DATA=DIR go test ./cmd/uhno -run XXX -bench Dynamics`).
//     Batching does not help on the CPU (1.47/1.30/1.24/1.31 s at batch
//     16/32/64/128); 72% of a record is the model's forward kernels. A
//     diagnostic that slows training by a tenth is not one to leave on by
//     default, so `--dynamics-every` defaults to 1,000 (about 2%), which is
//     also the paper's angle cadence, and `--dynamics-every 200` gives the
//     paper's exact cadence at the stated cost. 3D tasks default to off (a
//     record scales with the grid; roughly 60% of a cfd3d run at 200 steps by
//     the same scaling). `uhno train` prints the share of time its probes
//     took. The angle costs one forward and backward of 64 pairs and is
//     recorded with every dynamics record.
//   - Figures. `dynamics.Figures` draws panels (a)-(e) from one or more
//     runs' logs; `uhno eval` draws them for every evaluated run with records
//     into its figures/, and `uhno report` per task (Full against mode E in
//     panel (e) when both are given). Panel (f) is `uhno ablate --sweep
//     spar.rho0=...`. EMA smoothing 0.9 on (a) and (e) as App. "Smoothing"
//     says; histograms unsmoothed.
package dynamics
