package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"uhno/internal/doctor"
)

// TestDoctorExitCode runs `uhno doctor` through run, as main does: the
// CPU build exits 0 with nothing on stderr; the GPU builds are tested in
// doctor_emu_test.go.
func TestDoctorExitCode(t *testing.T) {
	if doctor.GPUUsable || compiledBackends()[0] != "cpu" {
		t.Skip("CPU build only")
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"doctor"}, &out, &errOut); code != 0 || errOut.Len() != 0 {
		t.Errorf("doctor: exit %d, stderr %q; want 0 and nothing", code, errOut.String())
	}
	if !strings.Contains(out.String(), "GPU         not available in this build") {
		t.Errorf("doctor report lacks the CPU build's GPU line:\n%s", out.String())
	}
}
