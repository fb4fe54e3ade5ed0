// Command uhno trains and evaluates U-HNO, the U-shaped hybrid neural
// operator with sparse-point adaptive routing, on the paper's PDE
// benchmarks. Run `uhno --help` for the tasks and commands.
//
// # uhno train
//
// `uhno train --task NAME [--model uhno|fno] [--mode A..I] [--steps N]
// [--warmup N] [--batch B] [--params 0.62M] [--width W] [--out DIR]
// [--resume DIR] [--data DIR] [--threads N]` loads the configuration like
// every command (`--config`, `UHNO_*`, `--set`), finds the data (a PDEBench
// file indexed by `uhno datagen --pdebench`, else the generated file, which
// it generates on first use: `uhno train --task burgers` works on a fresh
// machine), splits it by trajectory (seeded), computes or reuses the
// training statistics, builds the model and prints its parameter count, and
// calls `train.Run`. The run directory defaults to `runs/<task>-<model
// name>`; a fresh run refuses a directory that already holds one. FNO's
// width is matched to U-HNO's parameter count (after `--params`) within 10%
// unless `--width` is given; FNO accepts only the loss modes C, D and E.
//
// `--steps N` without `--warmup` (or a `--set optim.warmup=`) scales the
// configuration's warm-up to the new length, the paper's 1,000 of 20,000
// (`--steps 200`: 10), and says so, instead of refusing a warm-up longer
// than the run (`TestScaleWarmup`).
//
// # uhno ablate
//
// The ablation study (Sec. "Ablation Study", App. "Extended Ablations") is
// `uhno train` and `uhno eval` run once per entry, with nothing of its own
// in the training or the metrics, so an ablation row means exactly what a
// training run and an evaluation mean elsewhere.
//
//   - One schedule. The flags of `uhno train` that shape a run (`--steps`,
//     `--warmup`, `--params`, `--batch`, `--set`, `--data`) are resolved once
//     and applied to every entry; `--steps` without `--warmup` scales the
//     warm-up once, as `uhno train` does. This is the paper's "unified,
//     budget-matched schedule" (App. "Extended Ablations"). `--params` scales
//     Full's C0; modes A, B and F add or remove their parts at that width,
//     and mode G's flat width is matched to Full's count (Tab.
//     ablation-setup). Every entry's parameter count is printed before
//     anything trains, with its difference from Full.
//   - Layout. `<dir>/<mode>` (or `<dir>/<key>=<value>` for a sweep) is a
//     plain run directory of `uhno train`: it can be resumed, evaluated,
//     compared or reported on by itself. Its evaluation is
//     `<dir>/eval/<name>/results.json` (and results.md, figures), a plain
//     `uhno eval` output. `ablation.json` (format `uhno-ablation/1`,
//     `eval.Ablation`) collects the evaluations, the schedule and the command
//     line; `ablation.md` is Tab. burgers-ablation's columns (rollout MSE,
//     relL2, relH1 with bootstrap intervals) and the degradation factors
//     (each mean over Full's; the factor of the means, not a mean of per
//     trajectory ratios, as the paper's factors are ratios of its table's
//     entries); `figures/degradation.png` is Fig. burgers-ablation-bars.
//   - Resumable and safe. Each entry's state is read from its directory: a
//     checkpoint at the last step is done, an earlier one is resumed (`uhno
//     train --resume`, bit-for-bit), none is trained. An evaluation is reused
//     when it was made of the run's last step with the same rollout length,
//     trajectories and bootstrap. Rerunning a finished command therefore
//     trains and evaluates nothing. A directory holding a run of other
//     settings (any configuration key, or another architecture such as a
//     different `--params`) is an error naming the first differing key: ablate
//     never mixes another experiment into a table and never overwrites one.
//     Ctrl-C is `uhno train`'s: a checkpoint, then ablate stops and says to
//     rerun.
//   - Sweeps. `--sweep key=v1,v2,...` is the same pipeline over one
//     configuration value (the key is validated like `--set`), for Full or one
//     mode named by `--modes`; `figures/sweep.png` draws the endpoint relL2
//     and relH1 with their intervals against the value (Fig.
//     training-dynamics (f)). Sweeps have no reference entry and no factors.
package main
