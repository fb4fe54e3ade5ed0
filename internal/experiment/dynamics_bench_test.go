package experiment

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"uhno/internal/config"
	"uhno/internal/data"
	"uhno/internal/datagen"
	"uhno/internal/dynamics"
	"uhno/internal/eval"
	"uhno/internal/model"
	"uhno/internal/runrec"
	"uhno/internal/train"
)

// BenchmarkDynamics measures the training-dynamics probe of `uhno train`
// against a training step on Burgers at the paper's stated budget
// (--params 0.62M, batch 32): "step" is one training step (forward,
// loss, backward, AdamW), "probe" one record (a 25-step rollout of 128
// test trajectories with the metrics and the SPAR statistics, all 128 in
// one batch as `uhno train` runs it in 1D), "probe-batchN" the same in
// batches of N. The overhead at the paper's cadence is probe / (200 step). It needs a data
// directory in UHNO_BENCH_DATA (the Burgers file of 64 + 128 trajectories
// is generated there on first use, a few minutes) and is skipped
// otherwise:
//
//	UHNO_BENCH_DATA=/tmp/dyn-data go test ./internal/experiment -run '^$' -bench Dynamics -benchtime 5x
func BenchmarkDynamics(b *testing.B) {
	dir := os.Getenv("UHNO_BENCH_DATA")
	if dir == "" {
		b.Skip("set UHNO_BENCH_DATA to a data directory")
	}
	ctx := context.Background()
	cfg := taskConfig(b, "burgers", "data.train_trajectories=64", "data.test_trajectories=128")
	gen, err := datagen.Run(ctx, datagen.Options{Config: cfg, Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	td, err := openTaskData(cfg, gen.Path, 1, statsFrom{Sidecar: freshSidecar(gen.Path, dir)})
	if err != nil {
		b.Fatal(err)
	}
	defer td.ds.Close()
	backend, closeB, err := testEnv(nil, nil).openBackend(0)
	if err != nil {
		b.Fatal(err)
	}
	defer closeB()
	in, out := td.plan.InputShape(1)[1], td.plan.TargetShape(1)[1]
	rec := runrec.BuildRecord{Record: model.Record{Model: "uhno"}}
	m, _, err := buildModel(cfg, in, out, modelChoice{Params: "0.62M"}, &rec, backend)
	if err != nil {
		b.Fatal(err)
	}
	probe, _, err := dynamicsProbe(cfg, td, m, backend, 200, 128)
	if err != nil {
		b.Fatal(err)
	}

	b.Run("probe", func(b *testing.B) {
		for b.Loop() {
			if _, err := probe.Run(ctx, 200); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, batch := range []int{16, 32, 64} {
		p, err := dynamics.NewProbe(m, backend, eval.Source{Plan: td.plan, Trajs: td.split.Test[:128], Stats: &td.stats, Grid: mustGrid(b, cfg, td)},
			dynamics.ProbeOptions{Every: 200, Steps: cfg.Data.Rollout, Batch: batch})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("probe-batch%d", batch), func(b *testing.B) {
			for b.Loop() {
				if _, err := p.Run(ctx, 200); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("step", func(b *testing.B) {
		batcher, err := data.NewBatcher(td.plan, td.split.Train, data.BatchOptions{Batch: cfg.Optim.Batch, Seed: 1, Stats: &td.stats})
		if err != nil {
			b.Fatal(err)
		}
		tcfg := train.Config{
			Model: train.Adapt(m), Backend: backend, Train: train.FromBatcher(batcher),
			Loss:     train.LossConfigFor(cfg),
			Schedule: train.Schedule{Peak: 1e-4, Warmup: 0, Steps: b.N},
			Optim:    train.AdamW{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8},
			Keep:     1, Dir: filepath.Join(b.TempDir(), "run"), Run: cfg,
		}
		b.ResetTimer()
		if _, err := train.Run(ctx, tcfg, nil); err != nil {
			b.Fatal(err)
		}
	})
}

func mustGrid(b *testing.B, cfg config.Config, td *taskData) eval.Grid {
	g, err := metricGrid(cfg, td)
	if err != nil {
		b.Fatal(err)
	}
	return g
}
