// Command forward_dump writes one forward pass of a trained U-HNO or FNO
// checkpoint for scripts/compare_forward.py, which loads the same weights
// into the PyTorch yardstick (../shared/yardstick) and compares the two
// predictions: a check, with shared weights, that uhno computes the
// yardstick's function, independent of training.
//
//	go run ./scripts/forward_dump -checkpoint runs/burgers-uhno -n 64 -out /tmp/fwd
//
// It writes DIR/input.f32 (the first frame of trajectories 0..n-1,
// normalised as in training), DIR/output.f32 (uhno's prediction, model
// units) and DIR/meta.json (shapes, the weights file, model spec).
package main

import (
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"uhno/internal/cpu"
	"uhno/internal/data"
	"uhno/internal/model"
	"uhno/internal/tensor"
	"uhno/internal/train"
)

func main() {
	ck := flag.String("checkpoint", "", "run or step directory of uhno train")
	n := flag.Int("n", 64, "trajectories (the first n of the file)")
	out := flag.String("out", "", "output directory")
	flag.Parse()
	if err := run(*ck, *n, *out); err != nil {
		fmt.Fprintln(os.Stderr, "forward_dump:", err)
		os.Exit(1)
	}
}

func run(ckPath string, n int, out string) error {
	st, dir, err := train.ReadState(ckPath)
	if err != nil {
		return err
	}
	var rec struct {
		model.Record        // {model, spec}; older checkpoints upgraded
		Data         string `json:"data"`
		Stride       int    `json:"stride"`
	}
	if err := json.Unmarshal(st.Build, &rec); err != nil {
		return err
	}
	rec.Upgrade()
	if rec.Model != "uhno" && rec.Model != "fno" {
		return fmt.Errorf("%s holds a %s model; the yardstick compares uhno and fno", dir, rec.Model)
	}
	cfg := st.Config
	ds, err := data.Open(rec.Data, data.Options{Stride: rec.Stride})
	if err != nil {
		return err
	}
	defer ds.Close()
	split, err := data.NewSplit(ds.Len(), cfg.Data.TrainTrajectories, cfg.Data.TestTrajectories, data.SplitSeeded, uint64(cfg.Seed))
	if err != nil {
		return err
	}
	plan, err := ds.Plan(data.Sampling{Inputs: cfg.Data.Inputs, Outputs: cfg.Data.Outputs, History: cfg.Data.History, Pairs: cfg.Data.PairsPerTrajectory})
	if err != nil {
		return err
	}
	stats, _, err := data.LoadOrComputeStats(plan, split.Train, data.StatsPath(rec.Data))
	if err != nil {
		return err
	}
	b := cpu.New(1)
	m, _, err := model.Build(b, rec.Record, uint64(cfg.Seed))
	if err != nil {
		return err
	}
	if _, _, err := train.LoadWeights(dir, train.Adapt(m), b); err != nil {
		return err
	}
	inShape, tgtShape := plan.InputShape(n), plan.TargetShape(n)
	in := make([]float32, tensor.Numel(inShape))
	tgt := make([]float32, tensor.Numel(tgtShape))
	li, lt := len(in)/n, len(tgt)/n
	for i := range n {
		if err := plan.ReadPair(data.Pair{Traj: i, Start: 0}, in[i*li:(i+1)*li], tgt[i*lt:(i+1)*lt]); err != nil {
			return err
		}
	}
	stats.Normalize(in, plan.InputChannels(), ds.Points())
	tp := tensor.NewTape(b)
	tp.SetGrad(false)
	pred, _ := m.Forward(tp, tp.FromHost(in, inShape...))
	y := tensor.ToHost(b, pred)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name, v := range map[string][]float32{"input.f32": in, "output.f32": y} {
		buf := make([]byte, 4*len(v))
		for i, x := range v {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
		}
		if err := os.WriteFile(filepath.Join(out, name), buf, 0o644); err != nil {
			return err
		}
	}
	meta, _ := json.MarshalIndent(map[string]any{"input_shape": inShape, "output_shape": pred.Shape,
		"weights": filepath.Join(dir, train.WeightsFile), "model": rec.Model, rec.Model: rec.Spec}, "", "  ")
	return os.WriteFile(filepath.Join(out, "meta.json"), meta, 0o644)
}
