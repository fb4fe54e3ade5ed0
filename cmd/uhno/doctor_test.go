package main

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"runtime/debug"
	"strings"
	"testing"
)

// fakeProbe returns a probe of an imaginary machine: procFile is the
// content of the NVIDIA proc file ("" for none), smi the path of
// nvidia-smi ("" for none), and smiErr the error its query returns.
func fakeProbe(procFile, smi string, smiErr error) hostProbe {
	return hostProbe{
		ReadFile: func(name string) ([]byte, error) {
			if name == nvidiaProcFile && procFile != "" {
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

func TestDoctorReport(t *testing.T) {
	if compiledBackends()[0] != "cpu" {
		t.Skip("the CPU build's report; uhno-emu's doctor is tested in doctor_emu_test.go")
	}
	const proc = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:33 UTC 2025\nGCC version: gcc 12\n"
	tests := []struct {
		name    string
		probe   hostProbe
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
			var out bytes.Buffer
			if err := doctorRun(context.Background(), &doctorOptions{Out: &out, Version: tt.version, Probe: tt.probe}); err != nil {
				t.Fatal(err)
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

func TestVersionLine(t *testing.T) {
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want string
	}{
		{"no build info", nil, false, "dev (no VCS information in this build)"},
		{"no VCS stamp", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, true, "dev (no VCS information in this build)"},
		{"module version", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, true, "dev (module v1.2.3)"},
		{"clean checkout", &debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}, {Key: "vcs.modified", Value: "false"}}}, true,
			"dev (commit abc)"},
	}
	for _, tt := range tests {
		if got := versionLine("dev", tt.info, tt.ok); got != tt.want {
			t.Errorf("%s: versionLine = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestDoctorVerdict(t *testing.T) {
	if err := doctorVerdict(nil); err != nil {
		t.Errorf("doctorVerdict(nil) = %v, want nil (exit 0)", err)
	}
	err := doctorVerdict(errors.New("opening GPU 0: cuInit:\nCUDA_ERROR_NO_DEVICE"))
	if err == nil {
		t.Fatal("doctorVerdict(open failure) = nil, want an error (exit 1)")
	}
	if want := "doctor: the GPU backend is not usable: opening GPU 0: cuInit: CUDA_ERROR_NO_DEVICE"; err.Error() != want {
		t.Errorf("doctorVerdict = %q, want %q", err, want)
	}
}

// TestDoctorExitCode runs `uhno doctor` through run, as main does: the
// CPU build exits 0 with nothing on stderr; the GPU builds are tested in
// doctor_emu_test.go.
func TestDoctorExitCode(t *testing.T) {
	if gpuUsable || compiledBackends()[0] != "cpu" {
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
