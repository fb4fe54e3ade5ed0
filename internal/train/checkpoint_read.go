package train

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/maruel/safetensors"
)

// The checks below treat a checkpoint's files as outside input: a file
// can pass the manifest's checksum and still be wrong (the manifest was
// rewritten with it, or another program wrote both), so every value that
// sizes an allocation, a loop or a lookup is checked against the file it
// came from before use. Errors are one line and name the checkpoint, the
// file and the value. FuzzCheckpointTensors and FuzzCheckpointState
// exercise them.

// checkStepName checks the step directory name that latest holds: what
// StepDirName writes, "step-" and digits. Anything else (a path, a
// control character that would break an error message in two) is
// refused.
func checkStepName(path, name string) error {
	digits, ok := strings.CutPrefix(name, "step-")
	if _, err := strconv.Atoi(digits); !ok || err != nil || strings.ContainsAny(digits, "+-") {
		return fmt.Errorf("train: checkpoint %s: %s holds %q, want a step directory name such as %q", path, LatestFile, name, StepDirName(1000))
	}
	return nil
}

// checkManifest checks that every file the manifest lists has a size and
// a SHA-256 that a file can have.
func checkManifest(dir string, man manifest) error {
	for _, name := range sortedNames(man.Files) {
		f := man.Files[name]
		if f.Size < 0 || len(f.SHA256) != 64 || strings.Trim(f.SHA256, "0123456789abcdef") != "" {
			return fmt.Errorf("train: checkpoint %s: %s is corrupt: %s has size %d and SHA-256 %q, want a size >= 0 and 64 hex digits",
				dir, ManifestFile, strconv.Quote(name), f.Size, f.SHA256)
		}
	}
	return nil
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// checkState checks what resuming and evaluation rely on in a decoded
// State: a schedule that can be followed, a step within it, a data
// position within the step (Run draws one batch per update; resuming
// replays them, so an unbounded count would hang it), a batch size and a
// parameter count, a best validation step not after the step, and the
// task of its own configuration.
func checkState(dir string, st State) error {
	bad := func(key string, got any, want string) error {
		return fmt.Errorf("train: checkpoint %s: %s: %s is %v, want %s", dir, StateFile, key, got, want)
	}
	s := st.Schedule
	switch {
	case !(s.Peak > 0) || s.Steps < 1 || s.Warmup < 0 || s.Warmup >= s.Steps:
		return bad("the schedule (peak lr, warmup, steps)", fmt.Sprintf("%g, %d, %d", s.Peak, s.Warmup, s.Steps), "a peak > 0 and 0 <= warmup < steps")
	case st.Step < 0 || st.Step > s.Steps:
		return bad("step", st.Step, fmt.Sprintf("0..%d (schedule.steps)", s.Steps))
	case st.Data.Drawn < 0 || st.Data.Drawn > st.Step:
		return bad("batches_drawn", st.Data.Drawn, fmt.Sprintf("0..%d, at most one batch per step", st.Step))
	case st.Data.Batch < 0:
		return bad("data.batch", st.Data.Batch, ">= 0")
	case st.Params < 1:
		return bad("params", st.Params, ">= 1")
	case st.LR < 0:
		return bad("lr", st.LR, ">= 0")
	case st.BestValStep < 0 || st.BestValStep > st.Step:
		return bad("best_val_step", st.BestValStep, fmt.Sprintf("0..%d (step)", st.Step))
	case st.Task != st.Config.Task:
		return bad("task", strconv.Quote(st.Task), fmt.Sprintf("%q, the task of its configuration", st.Config.Task))
	}
	return nil
}

// decodeWeights parses weights.safetensors into its tensors by name and
// the names in file order, checking every tensor (checkTensor).
func decodeWeights(dir string, raw []byte) (map[string]safetensors.Tensor, []string, error) {
	tensors, err := parseTensors(dir, WeightsFile, raw)
	if err != nil {
		return nil, nil, err
	}
	byName := make(map[string]safetensors.Tensor, len(tensors))
	order := make([]string, 0, len(tensors))
	for _, t := range tensors {
		byName[t.Name] = t
		order = append(order, t.Name)
	}
	return byName, order, nil
}

// decodeMoments parses optimizer.safetensors: exactly the flat F32
// vectors adamw.m and adamw.v, of equal length.
func decodeMoments(dir string, raw []byte) (m, v []float32, err error) {
	tensors, err := parseTensors(dir, OptimizerFile, raw)
	if err != nil {
		return nil, nil, err
	}
	for _, t := range tensors {
		if len(t.Shape) != 1 {
			return nil, nil, fmt.Errorf("train: checkpoint %s: %s: tensor %q has shape %v, want a flat vector", dir, OptimizerFile, t.Name, t.Shape)
		}
		switch t.Name {
		case momentM:
			m = float32s(t)
		case momentV:
			v = float32s(t)
		default:
			return nil, nil, fmt.Errorf("train: checkpoint %s: %s holds tensor %q, want only %q and %q", dir, OptimizerFile, t.Name, momentM, momentV)
		}
	}
	if m == nil || v == nil || len(m) != len(v) {
		return nil, nil, fmt.Errorf("train: checkpoint %s: %s lacks the moments %q and %q of equal length", dir, OptimizerFile, momentM, momentV)
	}
	return m, v, nil
}

// parseTensors parses a safetensors file and checks each tensor: a
// non-empty name used once, dtype F32, and a shape of positive dimensions
// whose product is exactly the number of float32 values in its data. The
// library checks the data offsets against the file's length before it
// returns anything and allocates nothing sized by a shape; this adds what
// it lets through: a zero dimension beside a huge one (a product that is
// 0 however large the others), repeated names, other dtypes.
func parseTensors(dir, name string, raw []byte) ([]safetensors.Tensor, error) {
	f, err := safetensors.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("train: checkpoint %s: %s: %w", dir, name, err)
	}
	seen := make(map[string]bool, len(f.Tensors))
	for _, t := range f.Tensors {
		if err := checkTensor(t, seen); err != nil {
			return nil, fmt.Errorf("train: checkpoint %s: %s: %w", dir, name, err)
		}
	}
	return f.Tensors, nil
}

// checkTensor checks one parsed tensor (see parseTensors); seen collects
// the names so far.
func checkTensor(t safetensors.Tensor, seen map[string]bool) error {
	switch {
	case t.Name == "":
		return fmt.Errorf("a tensor has an empty name")
	case seen[t.Name]:
		return fmt.Errorf("tensor %q appears twice", t.Name)
	case t.DType != safetensors.F32:
		return fmt.Errorf("tensor %q is %s, want F32", t.Name, t.DType)
	}
	seen[t.Name] = true
	values := uint64(len(t.Data) / 4)
	n := uint64(1)
	for _, d := range t.Shape {
		if d < 1 || d > values/n {
			return fmt.Errorf("tensor %q has shape %v for %d values of data, want positive dimensions whose product is the number of values", t.Name, t.Shape, values)
		}
		n *= d
	}
	if n != values || len(t.Data)%4 != 0 {
		return fmt.Errorf("tensor %q has shape %v for %d bytes of data, want 4 bytes per value", t.Name, t.Shape, len(t.Data))
	}
	return nil
}
