//go:build !cuda && !cudaemu

package doctor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime/debug"
	"strings"
	"testing"
)

// The CPU build's report; uhno-emu's doctor is tested in cmd/uhno's
// doctor_emu_test.go.

// fakeProbe returns a probe of an imaginary machine: procFile is the
// content of the NVIDIA proc file ("" for none), smi the path of
// nvidia-smi ("" for none), and smiErr the error its query returns.
func fakeProbe(procFile, smi string, smiErr error) Probe {
	return Probe{
		ReadFile: func(name string) ([]byte, error) {
			if name == NvidiaProcFile && procFile != "" {
				return []byte(procFile), nil
			}
			return nil, fs.ErrNotExist
		},
		LookPath: func(string) (string, error) {
			if smi == "" {
				return "", errors.New("not found")
			}
			return smi, nil
		},
		QuerySMI: func(context.Context, string) (string, error) {
			if smiErr != nil {
				return "", smiErr
			}
			return "NVIDIA H100 80GB HBM3, 580.65.06, 81559 MiB", nil
		},
		NumCPU:     func() int { return 16 },
		GOMAXPROCS: func() int { return 8 },
		BuildInfo: func() (*debug.BuildInfo, bool) {
			return &debug.BuildInfo{Settings: []debug.BuildSetting{
				{Key: "vcs.revision", Value: "0123456789abcdef0123"},
				{Key: "vcs.time", Value: "2025-01-02T03:04:05Z"},
				{Key: "vcs.modified", Value: "true"},
			}}, true
		},
	}
}

func TestReport(t *testing.T) {
	const proc = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:33 UTC 2025\nGCC version: gcc 12\n"
	tests := []struct {
		name    string
		probe   Probe
		version string
		want    []string
	}{
		{"no GPU", fakeProbe("", "", nil), "dev", []string{
			"uhno        dev (commit 0123456789ab, 2025-01-02T03:04:05Z, with local changes)\n",
			"cpu cores   16 (GOMAXPROCS 8)\n",
			"backends    cpu\n",
			"GPU         not available in this build (build bin/uhno-cuda with `make cuda`)\n",
			"GPU device  none found (no /proc/driver/nvidia/version, no nvidia-smi on PATH)\n",
		}},
		{"GPU present", fakeProbe(proc, "/usr/bin/nvidia-smi", nil), "v0.1.0", []string{
			"uhno        v0.1.0 (",
			"GPU device  driver: NVRM version: NVIDIA UNIX x86_64 Kernel Module 580.65.06 Sun Jul 27 07:09:33 UTC 2025; " +
				"GPUs: NVIDIA H100 80GB HBM3, 580.65.06, 81559 MiB; this binary cannot use it (CPU build)\n",
		}},
		{"driver only", fakeProbe(proc, "", nil), "dev", []string{
			"GPU device  driver: NVRM version:", "; this binary cannot use it (CPU build)\n",
		}},
		{"nvidia-smi fails", fakeProbe("", "/usr/bin/nvidia-smi", errors.New("exit status 9")), "dev", []string{
			"GPU device  /usr/bin/nvidia-smi failed: exit status 9; this binary cannot use it (CPU build)\n",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rows, err := Report(context.Background(), Build{Version: tt.version, Backends: []string{"cpu"}}, tt.probe)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			for _, r := range rows { // as cmd/uhno prints them
				fmt.Fprintf(&out, "%-11s %s\n", r[0], r[1])
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("report lacks %q:\n%s", w, out.String())
				}
			}
			if n := strings.Count(out.String(), "\n"); n != 7 {
				t.Errorf("report has %d lines, want 7:\n%s", n, out.String())
			}
		})
	}
}
