// Package disttest helps tests start processes under Open MPI's mpirun.
// Tests that need mpirun skip without it, except in CI (CI=true), where
// scripts/setup.sh installs Open MPI and a missing mpirun is a failure.
package disttest

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
)

// MPIRun returns the path of mpirun, skipping the test when it is absent
// outside CI and failing it in CI.
func MPIRun(t testing.TB) string {
	t.Helper()
	path, err := exec.LookPath("mpirun")
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("mpirun not found in CI: scripts/setup.sh installs openmpi-bin and libopenmpi-dev")
	}
	t.Skip("mpirun not found: install openmpi-bin and libopenmpi-dev (scripts/setup.sh) to run the MPI tests")
	return ""
}

// Command returns an mpirun command starting np copies of prog with args:
// --oversubscribe (more ranks than cores), as root --allow-run-as-root,
// and --bind-to none (ranks free to share the cores with the rest of the
// machine). The child's environment is the caller's plus env.
func Command(t testing.TB, np int, env []string, prog string, args ...string) *exec.Cmd {
	t.Helper()
	mpirun := MPIRun(t)
	full := []string{"-np", strconv.Itoa(np), "--oversubscribe", "--bind-to", "none"}
	if os.Geteuid() == 0 {
		full = append(full, "--allow-run-as-root")
	}
	full = append(append(full, prog), args...)
	cmd := exec.Command(mpirun, full...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}
