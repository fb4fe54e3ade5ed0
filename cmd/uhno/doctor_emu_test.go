//go:build cudaemu && !cuda

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"uhno/internal/cuda"
)

// TestDoctorEmuExitCode: uhno-emu doctor exits 0 when the emulated backend
// opens and computes its kernel round trip, and 1 with one line on stderr
// when the backend cannot open (forced here by an invalid $UHNO_EMU_ORDER,
// which makes the emulated driver's open fail, as a missing GPU, cuFFT or
// PTX module makes the real one's).
func TestDoctorEmuExitCode(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"doctor"}, &out, &errOut); code != 0 || errOut.Len() != 0 {
		t.Fatalf("doctor: exit %d, stderr %q; want 0 and nothing\n%s", code, errOut.String(), out.String())
	}
	if !strings.Contains(out.String(), "kernel round trip ok") {
		t.Errorf("doctor report lacks the round trip:\n%s", out.String())
	}

	t.Setenv(cuda.EnvOrder, "sideways")
	out.Reset()
	errOut.Reset()
	code := run(context.Background(), []string{"doctor"}, &out, &errOut)
	if code == 0 {
		t.Fatalf("doctor with a backend that cannot open: exit 0, want non-zero\n%s", out.String())
	}
	msg := errOut.String()
	if strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "uhno: doctor: the GPU backend is not usable: ") || !strings.Contains(msg, cuda.EnvOrder) {
		t.Errorf("doctor stderr = %q, want one line naming why the backend cannot open", msg)
	}
	if !strings.Contains(out.String(), "GPU backend cannot open: ") {
		t.Errorf("doctor report lacks the failed backend row:\n%s", out.String())
	}
}
