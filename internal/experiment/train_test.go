package experiment

import (
	"bytes"
	"testing"

	"uhno/internal/runrec"
)

// TestResumeControlDynamics: a checkpoint of an older uhno records no
// dynamics settings, and the resume takes the flags' values without a
// line; a recorded interval (0 too) is kept unless the flag is given.
func TestResumeControlDynamics(t *testing.T) {
	zero, five := 0, 5
	tests := []struct {
		name       string
		rec        runrec.RunControl
		given      map[string]bool
		every      int // the flag's value
		wantEvery  int
		wantTrajs  int
		wantOutput string
	}{
		{"older checkpoint", runrec.RunControl{Keep: 2}, nil, 200, 200, 128, ""},
		{"recorded off", runrec.RunControl{Keep: 2, DynamicsEvery: &zero, DynamicsTrajs: 128}, nil, 200, 0, 128, ""},
		{"recorded", runrec.RunControl{Keep: 2, DynamicsEvery: &five, DynamicsTrajs: 16}, nil, 200, 5, 16, ""},
		{"overridden", runrec.RunControl{Keep: 2, DynamicsEvery: &five, DynamicsTrajs: 16}, map[string]bool{"dynamics-every": true}, 50, 50, 16,
			"resume: --dynamics-every 50 overrides the run's 5\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			opts := &TrainOptions{Env: Env{Out: &out}, Keep: 2, DynamicsEvery: tt.every, DynamicsTrajs: 128,
				Changed: func(name string) bool { return tt.given[name] }}
			resumeControl(opts, "ck", &tt.rec)
			if opts.DynamicsEvery != tt.wantEvery || opts.DynamicsTrajs != tt.wantTrajs || out.String() != tt.wantOutput {
				t.Errorf("--dynamics-every %d --dynamics-trajectories %d, output %q; want %d %d %q",
					opts.DynamicsEvery, opts.DynamicsTrajs, out.String(), tt.wantEvery, tt.wantTrajs, tt.wantOutput)
			}
		})
	}
}
