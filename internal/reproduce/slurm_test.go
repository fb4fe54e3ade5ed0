package reproduce

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSlurmScriptSubmits runs the written script against a fake sbatch
// that records its arguments and checks what was submitted: the array's
// range, the cell command with the grid's flags, and the dependent final
// job.
func TestSlurmScriptSubmits(t *testing.T) {
	g, err := Plan(Options{Tasks: []string{"burgers", "darcy"}, Models: []string{"uhno", "fno"}, Tables: []string{"main-acc"}})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	if err := WriteSlurm(&sb, g, SlurmOptions{Binary: "/shared/bin/uhno", Args: []string{"--tasks", "burgers,darcy",
		"--out", "/shared/runs/it's here"}, MaxConcurrent: 3, CPUsPerTask: 4, Extra: []string{"--partition=cpu"}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "grid.sbatch")
	os.WriteFile(script, []byte(sb.String()), 0o755)
	log := filepath.Join(dir, "calls")
	fake := "#!/bin/bash\nn=$(($(wc -l < " + log + " 2>/dev/null || echo 0)+1))\nprintf '%s\\0' \"$@\" >> " + log + "\necho >> " + log + "\necho \"10$n;cluster\"\n"
	os.WriteFile(filepath.Join(dir, "sbatch"), []byte(fake), 0o755)
	cmd := exec.Command("bash", script)
	cmd.Env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("script failed: %v\n%s", err, out)
	}
	raw, _ := os.ReadFile(log)
	calls := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(calls) != 2 {
		t.Fatalf("sbatch called %d times, want 2:\n%s", len(calls), raw)
	}
	first := strings.Split(strings.TrimSuffix(calls[0], "\x00"), "\x00")
	second := strings.Split(strings.TrimSuffix(calls[1], "\x00"), "\x00")
	has := func(args []string, want string) bool {
		for _, a := range args {
			if a == want {
				return true
			}
		}
		return false
	}
	for _, want := range []string{"--array=0-3%3", "--cpus-per-task=4", "--partition=cpu"} {
		if !has(first, want) {
			t.Errorf("array job lacks %q: %q", want, first)
		}
	}
	wrap := first[len(first)-1]
	if wrap != `/shared/bin/uhno reproduce --tasks burgers,darcy --out '/shared/runs/it'\''s here' --cell "$SLURM_ARRAY_TASK_ID"` {
		t.Errorf("cell command %q", wrap)
	}
	if !has(second, "--dependency=afterok:101") {
		t.Errorf("final job not dependent on the array (job 101): %q", second)
	}
	if !strings.HasSuffix(second[len(second)-1], " --finish") {
		t.Errorf("final job runs %q", second[len(second)-1])
	}
	if !strings.Contains(string(out), "job 101") || !strings.Contains(string(out), "job 102") {
		t.Errorf("script output %q", out)
	}
	for i, r := range g.Runs {
		if !strings.Contains(sb.String(), "#   "+string(rune('0'+i))+": "+r.Dir) {
			t.Errorf("script does not list cell %d (%s)", i, r.Dir)
		}
	}
}

func TestSlurmRefusesEmpty(t *testing.T) {
	g, err := Plan(Options{Tables: []string{"cost"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSlurm(&strings.Builder{}, g, SlurmOptions{Binary: "uhno"}); err == nil {
		t.Error("a grid without trainings got a job array")
	}
}
