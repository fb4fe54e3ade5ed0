package train

import (
	"context"
	"testing"

	"uhno/internal/config"
	"uhno/internal/cpu"
	"uhno/internal/model"
	"uhno/internal/tensor"
)

// smallSpec is a 1D U-HNO with two levels on the 16-point test grid.
func smallSpec() model.Spec {
	return model.Spec{Dim: 1, InChannels: 1, OutChannels: 1, Levels: 2, C0: 4, WidthMult: 2, K0: 5,
		M: 3, Sigmas: []float64{0.55, 1.2, 2.5}, Groups: 2, MaxRadius: 16, ProjHidden: 8,
		Mode: model.ModeFull, SPAR: tensor.DefaultSPAR}
}

// realRun is tinyRun with a U-HNO (fno false) or an FNO of width 6.
func realRun(t *testing.T, dir string, steps int, fno bool, seed uint64) Config {
	t.Helper()
	cfg, _, _ := tinyRun(dir, steps, 2, seed)
	var m model.Model
	var err error
	if fno {
		m, err = model.NewFNO(cfg.Backend, model.FNOSpecFor(smallSpec(), 6), seed)
	} else {
		m, err = model.NewUHNO(cfg.Backend, smallSpec(), seed)
	}
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model = Adapt(m)
	cfg.Run = config.Config{Task: "burgers"}
	return cfg
}

// TestRealModels trains the U-HNO and the FNO of internal/model through
// the adapter: the validation loss falls by more than half in 80 steps,
// U-HNO's log carries the SPAR statistics of its 2L+1 = 5 routing stages
// and a CBC term, FNO's neither. (The training batches of 4 vary too much
// in amplitude to compare single steps; the validation set is fixed.)
func TestRealModels(t *testing.T) {
	for _, fno := range []bool{false, true} {
		name := map[bool]string{false: "uhno", true: "fno"}[fno]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := realRun(t, dir, 80, fno, 1)
			if _, err := Run(context.Background(), cfg, nil); err != nil {
				t.Fatal(err)
			}
			var train, val []LogRecord
			for _, r := range readLog(t, dir) {
				if r.Kind == "train" {
					train = append(train, r)
				} else {
					val = append(val, r)
				}
			}
			if first, last := val[0].MSE, val[len(val)-1].MSE; !(last < 0.5*first) {
				t.Errorf("validation MSE from %.4g (step %d) to %.4g (step %d), want at least halved", first, val[0].Step, last, val[len(val)-1].Step)
			}
			stages, cbc := len(train[0].Rho), train[0].CBC
			if fno && (stages != 0 || cbc != 0) {
				t.Errorf("fno: %d SPAR stages, cbc %g; want none", stages, cbc)
			}
			if !fno && (stages != 5 || !(cbc > 0)) {
				t.Errorf("uhno: %d SPAR stages, cbc %g; want 5 and a positive term", stages, cbc)
			}
		})
	}
}

// TestRealResume is TestResumeBitIdentical with the real U-HNO, resumed in
// a model built from another seed on one thread.
func TestRealResume(t *testing.T) {
	const n = 5
	straight := t.TempDir()
	if _, err := Run(context.Background(), realRun(t, straight, 2*n, false, 1), nil); err != nil {
		t.Fatal(err)
	}
	resumed := t.TempDir()
	cfg := realRun(t, resumed, 2*n, false, 1)
	cfg.StopAfter = n
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	cfg = realRun(t, resumed, 2*n, false, 77)
	cfg.Backend = cpu.New(1)
	cfg.Resume = resumed
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	sameRun(t, straight, resumed)
}
