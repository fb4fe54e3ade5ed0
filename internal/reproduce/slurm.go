package reproduce

import (
	"fmt"
	"io"
	"strings"
)

// SlurmOptions shape the job array WriteSlurm writes.
type SlurmOptions struct {
	// Binary is the uhno binary the jobs run (an absolute path on the
	// shared file system).
	Binary string
	// Args are the reproduce flags that define the grid and its output
	// (--tables, --tasks, --models, --schedule, --steps, --out, --set ...),
	// repeated verbatim in every job so each sees the same grid.
	Args []string
	// MaxConcurrent caps the array's running elements (%N); 0 = no cap.
	MaxConcurrent int
	// CPUsPerTask is each training's --cpus-per-task (0: Slurm's default).
	CPUsPerTask int
	// Extra are further #SBATCH lines' arguments, e.g. "--partition=gpu".
	Extra []string
}

// shellQuote quotes s for a POSIX shell unless it is plainly safe.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// WriteSlurm writes a submission script for g: running it (`bash FILE`)
// submits one job array whose element K runs `uhno reproduce --cell K`
// (one training each) and a job that depends on the whole array
// succeeding (afterok) and runs `uhno reproduce --finish` (evaluations,
// benches, report). Elements and the final job see the same flags, so
// they plan the same grid on the shared file system.
func WriteSlurm(w io.Writer, g *Grid, o SlurmOptions) error {
	if len(g.Runs) == 0 {
		return fmt.Errorf("--slurm: the grid has no training to run")
	}
	if o.Binary == "" {
		return fmt.Errorf("--slurm: no uhno binary path")
	}
	var args []string
	for _, a := range o.Args {
		args = append(args, shellQuote(a))
	}
	cmd := shellQuote(o.Binary) + " reproduce " + strings.Join(args, " ")
	var sb []string
	if o.CPUsPerTask > 0 {
		sb = append(sb, fmt.Sprintf("--cpus-per-task=%d", o.CPUsPerTask))
	}
	sb = append(sb, o.Extra...)
	opts := ""
	for _, s := range sb {
		opts += " " + shellQuote(s)
	}
	array := fmt.Sprintf("0-%d", len(g.Runs)-1)
	if o.MaxConcurrent > 0 {
		array += fmt.Sprintf("%%%d", o.MaxConcurrent)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/bash\n")
	fmt.Fprintf(&b, "# uhno reproduce on Slurm: %d trainings as one job array, then one job that\n", len(g.Runs))
	fmt.Fprintf(&b, "# evaluates and writes the report once every training has succeeded.\n")
	fmt.Fprintf(&b, "# Submit with: bash THIS_FILE   (from a directory on the shared file system)\n")
	fmt.Fprintf(&b, "# Cells (array index: run directory):\n")
	for i, r := range g.Runs {
		fmt.Fprintf(&b, "#   %d: %s\n", i, r.Dir)
	}
	fmt.Fprintf(&b, "set -euo pipefail\n")
	fmt.Fprintf(&b, "array=$(sbatch --parsable --job-name=uhno-cells --array=%s%s --wrap %s)\n",
		array, opts, shellQuote(cmd+" --cell \"$SLURM_ARRAY_TASK_ID\""))
	fmt.Fprintf(&b, "array=${array%%%%;*}\n")
	fmt.Fprintf(&b, "final=$(sbatch --parsable --job-name=uhno-report --dependency=afterok:\"$array\"%s --wrap %s)\n",
		opts, shellQuote(cmd+" --finish"))
	fmt.Fprintf(&b, "echo \"submitted the cells as job $array and the report as job ${final%%%%;*}\"\n")
	_, err := io.WriteString(w, b.String())
	return err
}
