package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/data/h5/h5test"
	"uhno/internal/data/npy"
)

// TestDatagen runs `uhno datagen` end to end on a small KS set and checks
// its bad-input messages.
func TestDatagen(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("UHNO_DATA", filepath.Join(dir, "cache"))
	args := []string{"datagen", "--task", "ks", "--train", "2", "--test", "1", "--quiet",
		"--set", "pde.t_burn=1", "--set", "pde.t_end=5", "--out", dir}
	code, out, errOut := execute(t, args...)
	if code != 0 || !strings.Contains(out, "3 trajectories (3 generated)") || errOut != "" {
		t.Fatalf("first run: code %d, out %q, err %q", code, out, errOut)
	}
	code, out, _ = execute(t, args...)
	if code != 0 || !strings.Contains(out, "up to date (3 trajectories)") {
		t.Fatalf("second run: code %d, out %q", code, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "ks_seed0_n3_*.h5"))
	if len(files) != 1 {
		t.Fatalf("files %v, want one ks_seed0_n3_*.h5", files)
	}
	// --seed makes another file.
	code, out, _ = execute(t, append(args, "--seed", "4")...)
	if code != 0 || !strings.Contains(out, "ks_seed4_n3_") {
		t.Fatalf("--seed 4: code %d, out %q", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "cache")); !os.IsNotExist(err) {
		t.Fatalf("--out was given, yet the cache directory was created")
	}

	bad := []struct {
		args []string
		want string
	}{
		{[]string{"datagen", "--task", "cfd3d"}, "uhno: datagen: task cfd3d has no built-in solver"},
		{[]string{"datagen", "--task", "ks", "--pdebench", "x.h5"}, "uhno: datagen: --pdebench is for darcy and cfd3d; task ks generates its own data\n"},
		{[]string{"datagen", "--task", "darcy", "--pdebench", filepath.Join(dir, "missing.hdf5")}, "file does not exist; PDEBench files come from"},
		{[]string{"datagen", "--task", "ks", "--train", "-1"}, "uhno: datagen: --train -1 --test 0: counts must be >= 1\n"},
		{[]string{"datagen", "--task", "ks", "--set", "pde.dt=-1"}, "uhno: config: key pde.dt"},
	}
	for _, b := range bad {
		code, _, errOut := execute(t, b.args...)
		if code != 1 || !strings.Contains(errOut, b.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: code %d, stderr %q, want one line containing %q", b.args, code, errOut, b.want)
		}
	}
}

// TestDatagenFrom: `uhno datagen --from FILE --out DIR` on a plain .npy
// array with hints prints the task and writes DIR/task.json; a mismatched
// --task is refused in one line and writes nothing.
func TestDatagenFrom(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mine.npy")
	if err := npy.Write(file, []int{10, 12, 16, 16, 1}, make([]float32, 10*12*16*16)); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "task")
	code, stdout, errOut := execute(t, "datagen", "--from", file, "--out", out, "--dt", "0.5", "--domain", "2,2", "--boundary", "periodic,wall", "--channels", "w")
	if code != 0 || !strings.Contains(stdout, "y 16 (wall, length 2)") || !strings.Contains(stdout, "channels: w") ||
		!strings.Contains(stdout, "ns2d's settings (10 frames in), 9 trajectories to train, 1 to test") || strings.Contains(stdout, "assumed") {
		t.Fatalf("code %d, out %q, err %q", code, stdout, errOut)
	}
	if _, err := os.Stat(filepath.Join(out, "task.json")); err != nil {
		t.Fatal(err)
	}
	out2 := filepath.Join(dir, "task2")
	code, _, errOut = execute(t, "datagen", "--from", file, "--out", out2, "--task", "kdv")
	if code == 0 || !strings.Contains(errOut, "--task kdv is 1D") || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Fatalf("--task kdv: code %d, err %q", code, errOut)
	}
	if _, err := os.Stat(out2); !os.IsNotExist(err) {
		t.Fatalf("%s written on a refusal", out2)
	}
}

// TestTrainOnDescribedData is issue 36's path end to end on a plain
// array: datagen --from, then train --data DIR (no --task) for U-HNO and
// FNO, then eval of both runs, which find the described file through
// their checkpoints.
func TestTrainOnDescribedData(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "waves.npy")
	const n, frames, nx, ny, c = 8, 12, 16, 16, 2
	v := make([]float32, n*frames*nx*ny*c)
	for i := range v {
		p, ch := i/c, i%c
		x, y, f, b := (p/ny)%nx, p%ny, (p/(nx*ny))%frames, p/(nx*ny*frames)
		v[i] = float32(math.Sin(2*math.Pi*(float64(x)/nx+0.05*float64(f)+0.1*float64(b))) * math.Cos(2*math.Pi*float64(y+ch)/ny))
	}
	if err := npy.Write(file, []int{n, frames, nx, ny, c}, v); err != nil {
		t.Fatal(err)
	}
	task := filepath.Join(dir, "task")
	if code, _, errOut := execute(t, "datagen", "--from", file, "--out", task, "--channels", "u,v", "--dt", "0.05"); code != 0 {
		t.Fatalf("datagen --from: %s", errOut)
	}
	// config --data shows the task it made.
	if code, out, errOut := execute(t, "config", "--data", task); code != 0 || !strings.Contains(out, "task description "+filepath.Join(task, "task.json")) ||
		!strings.Contains(out, "source: described") || !strings.Contains(out, "inputs: [u, v]") {
		t.Fatalf("config --data: code %d, out %q, err %q", code, out, errOut)
	}
	// The dry run says where the data come from: the user's file.
	if code, out, errOut := execute(t, "train", "--data", task, "--dry-run", "--params", "0.06M"); code != 0 || !strings.Contains(out, "data: the user's file described in "+filepath.Join(task, "task.json")) {
		t.Fatalf("train --dry-run: code %d, out %q, err %q", code, out, errOut)
	}
	var runs []string
	for _, m := range []string{"uhno", "fno"} {
		run := filepath.Join(dir, "runs", m)
		code, out, errOut := execute(t, "train", "--data", task, "--model", m, "--steps", "3", "--params", "0.06M", "--out", run, "--quiet")
		if code != 0 || !strings.Contains(out, "ns2d's settings on the described data (channels u, v)") {
			t.Fatalf("train %s: code %d, out %q, err %q", m, code, out, errOut)
		}
		runs = append(runs, run)
	}
	ev := filepath.Join(dir, "eval")
	code, out, errOut := execute(t, figs("eval", "--checkpoint", strings.Join(runs, ","), "--out", ev, "--quiet")...)
	if code != 0 || !strings.Contains(out, "uhno (") || !strings.Contains(out, "fno (") {
		t.Fatalf("eval: code %d, out %q, err %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(ev, "results.json")); err != nil {
		t.Fatal(err)
	}
	// The ablation on the described task: --task's default (burgers) gives
	// way to the description's base.
	abl := filepath.Join(dir, "ablate")
	code, out, errOut = execute(t, figs("ablate", "--data", task, "--modes", "F", "--steps", "2", "--params", "0.06M", "--out", abl, "--quiet")...)
	if code != 0 || !strings.Contains(out, "F: NoSPAR") {
		t.Fatalf("ablate: code %d, out %q, err %q", code, out, errOut)
	}
	// Coordinate channels on a rolled-out task (a wall needs the model to
	// know where it is): trained, rolled out and predicted with the same
	// channels after the history frames at every step.
	co := filepath.Join(dir, "runs", "uhno-coords")
	if code, out, errOut := execute(t, "train", "--data", task, "--steps", "2", "--params", "0.06M", "--set", "data.coordinates=true", "--out", co, "--quiet"); code != 0 {
		t.Fatalf("train with coordinates: code %d, out %q, err %q", code, out, errOut)
	}
	if code, _, errOut := execute(t, figs("eval", "--checkpoint", co, "--out", co+"-eval", "--quiet")...); code != 0 {
		t.Fatalf("eval with coordinates: %s", errOut)
	}
	if code, _, errOut := execute(t, "predict", "--checkpoint", co, "--input", file, "--out", co+"-pred.npy", "--steps", "2", "--quiet"); code != 0 {
		t.Fatalf("predict with coordinates: %s", errOut)
	}
	// The side-by-side table on the user's data: the grid is the base's
	// column, its report has ours alone.
	rep := filepath.Join(dir, "reproduce")
	code, _, errOut = execute(t, figs("reproduce", "--tables", "main-acc", "--models", "uhno,fno", "--data", task, "--steps", "2", "--params", "0.06M", "--out", rep, "--quiet")...)
	if code != 0 {
		t.Fatalf("reproduce --data: %s", errOut)
	}
	report, err := os.ReadFile(filepath.Join(rep, "report", "report.md"))
	if err != nil || !strings.Contains(string(report), "A user's data file (uhno datagen --from") {
		t.Fatalf("report %v:\n%s", err, report)
	}
	// bench at the described shape: the batch (the 14 training pairs
	// there are), history x channels, grid.
	code, out, errOut = execute(t, "bench", "--data", task, "--model", "fno", "--params", "0.06M", "--repeats", "1", "--warmup", "0", "--quiet")
	if code != 0 || !strings.Contains(out, fmt.Sprintf("| 14x%dx%dx%d |", 10*c, nx, ny)) {
		t.Fatalf("bench --data: code %d, out %q, err %q", code, out, errOut)
	}
	if code, _, errOut = execute(t, "reproduce", "--tasks", "burgers", "--data", task, "--out", rep, "--dry-run"); code == 0 || !strings.Contains(errOut, "give --tasks ns2d or none") {
		t.Fatalf("reproduce --tasks burgers on ns2d-based data: code %d, err %q", code, errOut)
	}
}

// TestTrainOnEveryLayout is issue 36's done-when on a freshly written
// file in each layout (The Well 2D with a scalar and a vector field,
// PDEBench's 1D tensor, 2D per-sample groups and 2D CFD fields, a plain
// .npy): datagen --from, then train, eval and predict for U-HNO and FNO,
// each with the file's channels by name and count.
func TestTrainOnEveryLayout(t *testing.T) {
	dir := t.TempDir()
	const n, frames, nx, ny, nx1 = 6, 12, 16, 16, 32
	wave := func(b, f, x, y, c, n0 int) float32 {
		return float32(math.Sin(2*math.Pi*(float64(x)/float64(n0)+0.04*float64(f)+0.1*float64(b)+0.3*float64(c))) * math.Cos(2*math.Pi*float64(y)/ny))
	}
	// field is [nb, frames, grid..., comps] of wave values (grid 1D or 2D).
	field := func(nb, comps int, grid ...int) []float32 {
		var v []float32
		ys := 1
		if len(grid) > 1 {
			ys = grid[1]
		}
		for b := range nb {
			for f := range frames {
				for x := range grid[0] {
					for y := range ys {
						for c := range comps {
							v = append(v, wave(b, f, x, y, c, grid[0]))
						}
					}
				}
			}
		}
		return v
	}
	coords := func(m int) []float32 {
		v := make([]float32, m)
		for i := range v {
			v[i] = (float32(i) + 0.5) / float32(m)
		}
		return v
	}
	files := map[string]string{}
	files["well"] = filepath.Join(dir, "toy_well.hdf5")
	err := h5test.WriteTree(files["well"], []h5test.Node{
		{Path: "", Attrs: map[string]any{"n_spatial_dims": 2, "n_trajectories": n, "grid_type": "cartesian", "dataset_name": "toy"}},
		{Path: "dimensions", Group: true, Attrs: map[string]any{"spatial_dims": []string{"x", "y"}}},
		{Path: "dimensions/time", Dims: []int{frames}, Data: coords(frames)},
		{Path: "dimensions/x", Dims: []int{nx}, Data: coords(nx)},
		{Path: "dimensions/y", Dims: []int{ny}, Data: coords(ny)},
		{Path: "boundary_conditions", Group: true},
		{Path: "boundary_conditions/xy", Group: true, Attrs: map[string]any{"associated_dims": []string{"x", "y"}, "bc_type": "PERIODIC"}},
		{Path: "t0_fields", Group: true, Attrs: map[string]any{"field_names": []string{"density", "viscosity"}}},
		{Path: "t0_fields/density", Dims: []int{n, frames, nx, ny}, Data: field(n, 1, nx, ny)},
		// Constant inputs: a field per trajectory, a scalar per trajectory
		// and one scalar for all (left out).
		{Path: "t0_fields/viscosity", Dims: []int{n, nx, ny}, Data: field(n, 1, nx, ny)[:n*nx*ny],
			Attrs: map[string]any{"sample_varying": true, "time_varying": false}},
		{Path: "scalars", Group: true, Attrs: map[string]any{"field_names": []string{"Re", "Pr"}}},
		{Path: "scalars/Re", Dims: []int{n}, Data: []float32{100, 200, 300, 400, 500, 600}, Attrs: map[string]any{"sample_varying": true, "time_varying": false}},
		{Path: "scalars/Pr", Dims: []int{1}, Data: []float32{0.7}, Attrs: map[string]any{"sample_varying": false, "time_varying": false}},
		{Path: "t1_fields", Group: true, Attrs: map[string]any{"field_names": []string{"velocity"}}},
		{Path: "t1_fields/velocity", Dims: []int{n, frames, nx, ny, 2}, Data: field(n, 2, nx, ny)},
	})
	if err != nil {
		t.Fatal(err)
	}
	files["groups"] = filepath.Join(dir, "2D_diff-react.h5")
	var nodes []h5test.Node
	for b := range n {
		g := fmt.Sprintf("%04d", b)
		nodes = append(nodes, h5test.Node{Path: g, Group: true}, h5test.Node{Path: g + "/data", Dims: []int{frames, nx, ny, 2}, Data: field(1, 2, nx, ny)},
			h5test.Node{Path: g + "/grid", Group: true}, h5test.Node{Path: g + "/grid/x", Dims: []int{nx}, Data: coords(nx)},
			h5test.Node{Path: g + "/grid/y", Dims: []int{ny}, Data: coords(ny)}, h5test.Node{Path: g + "/grid/t", Dims: []int{frames}, Data: coords(frames)})
	}
	if err := h5test.WriteTree(files["groups"], nodes); err != nil {
		t.Fatal(err)
	}
	files["tensor"] = filepath.Join(dir, "1D_Burgers_Sols.hdf5")
	if err := h5test.Write(files["tensor"], []h5test.Dataset{{Name: "tensor", Dims: []int{n, frames, nx1}, Data: field(n, 1, nx1)},
		{Name: "x-coordinate", Dims: []int{nx1}, Data: coords(nx1)}, {Name: "t-coordinate", Dims: []int{frames + 1}, Data: coords(frames + 1)}},
		map[string]any{"Nu": 0.01}); err != nil {
		t.Fatal(err)
	}
	files["cfd"] = filepath.Join(dir, "2D_CFD_Rand.hdf5")
	cfd := []h5test.Dataset{{Name: "x-coordinate", Dims: []int{nx}, Data: coords(nx)}, {Name: "y-coordinate", Dims: []int{ny}, Data: coords(ny)},
		{Name: "t-coordinate", Dims: []int{frames + 1}, Data: coords(frames + 1)}}
	for _, f := range []string{"density", "pressure", "Vx", "Vy"} {
		cfd = append(cfd, h5test.Dataset{Name: f, Dims: []int{n, frames, nx, ny}, Data: field(n, 1, nx, ny)})
	}
	if err := h5test.Write(files["cfd"], cfd, map[string]any{"M": 1.0}); err != nil {
		t.Fatal(err)
	}
	files["npy"] = filepath.Join(dir, "plain.npy")
	if err := npy.Write(files["npy"], []int{n, frames, nx, ny, 3}, field(n, 3, nx, ny)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		layout, channels string
		grid             string
	}{
		{"well", "density, velocity_x, velocity_y; constant inputs viscosity, Re", "[16 16]"},
		{"tensor", "u", "[32]"},
		{"groups", "data_0, data_1", "[16 16]"},
		{"cfd", "density, pressure, Vx, Vy", "[16 16]"},
		{"npy", "c0, c1, c2", "[16 16]"},
	} {
		t.Run(tc.layout, func(t *testing.T) {
			task := filepath.Join(dir, tc.layout+"-task")
			channels, consts, _ := strings.Cut(tc.channels, "; constant inputs ")
			if code, out, errOut := execute(t, "datagen", "--from", files[tc.layout], "--out", task); code != 0 || !strings.Contains(out, "channels: "+channels+"\n") ||
				(consts != "" && (!strings.Contains(out, "constant inputs: "+consts+" (") || !strings.Contains(out, "left out: Pr ("))) {
				t.Fatalf("datagen --from: code %d, out %q, err %q", code, out, errOut)
			}
			nch := strings.Count(channels, ",") + 1
			for _, m := range []string{"uhno", "fno"} {
				run := filepath.Join(dir, "runs", tc.layout+"-"+m)
				code, out, errOut := execute(t, "train", "--data", task, "--model", m, "--steps", "2", "--params", "0.06M", "--out", run, "--quiet")
				if code != 0 || !strings.Contains(out, "(channels "+tc.channels+")") {
					t.Fatalf("train %s: code %d, out %q, err %q", m, code, out, errOut)
				}
				if code, _, errOut := execute(t, figs("eval", "--checkpoint", run, "--out", run+"-eval", "--quiet")...); code != 0 {
					t.Fatalf("eval %s: %s", m, errOut)
				}
				pred := run + "-pred.npy"
				code, out, errOut = execute(t, "predict", "--checkpoint", run, "--input", files[tc.layout], "--out", pred, "--steps", "1", "--quiet")
				if code != 0 || !strings.Contains(out, fmt.Sprintf("%d trajectories on grid %s, 1 steps", n, tc.grid)) {
					t.Fatalf("predict %s: code %d, out %q, err %q", m, code, out, errOut)
				}
				h, err := npy.ReadHeader(pred)
				if err != nil || h.Shape[0] != n || h.Shape[1] != 2 || (nch > 1 && h.Shape[len(h.Shape)-1] != nch) {
					t.Fatalf("prediction %s: header %+v, %v; want [%d, 2, grid..., %d channels]", pred, h, err, n, nch)
				}
				if consts != "" && m == "uhno" {
					checkPredictIsEval(t, run, files[tc.layout])
				}
			}
		})
	}
}

// checkPredictIsEval rolls run out with predict on its test split of file
// (the constant inputs read from the file as predict reads them) and
// requires eval's relL2 at the last step: a constant input predict got
// wrong would change the prediction.
func checkPredictIsEval(t *testing.T, run, file string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(run+"-eval", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		RolloutSteps int `json:"rollout_steps"`
		Models       []struct {
			Evaluation struct {
				Curves map[string]struct{ Mean []float64 } `json:"curves"`
			} `json:"evaluation"`
		} `json:"models"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || len(res.Models) != 1 {
		t.Fatalf("results.json: %v", err)
	}
	steps := res.RolloutSteps
	want := res.Models[0].Evaluation.Curves["relL2"].Mean[steps-1]
	code, out, errOut := execute(t, "predict", "--checkpoint", run, "--input", file, "--test-split", "--reference", file,
		"--out", run+"-split.npy", "--steps", fmt.Sprint(steps), "--quiet")
	if code != 0 {
		t.Fatalf("predict --test-split: %s", errOut)
	}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "step" && f[1] == fmt.Sprint(steps) {
			if !strings.Contains(l, fmt.Sprintf("%.4g [", want)) {
				t.Fatalf("predict's step %d: %q; eval's relL2 %.4g", steps, l, want)
			}
			return
		}
	}
	t.Fatalf("predict printed no step %d score:\n%s", steps, out)
}
