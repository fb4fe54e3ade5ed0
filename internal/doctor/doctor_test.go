package doctor

import (
	"errors"
	"runtime/debug"
	"testing"
)

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
		if got := VersionLine("dev", tt.info, tt.ok); got != tt.want {
			t.Errorf("%s: VersionLine = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	if err := Verdict(nil); err != nil {
		t.Errorf("Verdict(nil) = %v, want nil (exit 0)", err)
	}
	err := Verdict(errors.New("opening GPU 0: cuInit:\nCUDA_ERROR_NO_DEVICE"))
	if err == nil {
		t.Fatal("Verdict(open failure) = nil, want an error (exit 1)")
	}
	if want := "doctor: the GPU backend is not usable: opening GPU 0: cuInit: CUDA_ERROR_NO_DEVICE"; err.Error() != want {
		t.Errorf("Verdict = %q, want %q", err, want)
	}
}
