package experiment

import (
	"strings"
	"testing"
)

func TestChoosePrecision(t *testing.T) {
	cases := []struct {
		task, flag string
		autocast   bool
		resume     bool
		recorded   string
		want, note string // want "" : an error containing note
	}{
		{"cfd3d", "", true, false, "", "bf16", ""},
		{"burgers", "", true, false, "", "fp32", ""},
		{"ns2d", "bf16", true, false, "", "bf16", ""},
		{"cfd3d", "fp32", true, false, "", "fp32", ""},
		{"cfd3d", "", false, false, "", "fp32", "precision: fp32 (the CPU backend computes in float32; cfd3d's default, bf16 autocast, needs bin/uhno-cuda)"},
		{"burgers", "", false, false, "", "fp32", ""},
		{"burgers", "fp32", false, false, "", "fp32", ""},
		{"burgers", "bf16", false, false, "", "", "train: --precision bf16 needs the CUDA backend (bin/uhno-cuda); the CPU backend computes in float32"},
		{"burgers", "fp16", true, false, "", "", `train: --precision "fp16": want bf16 or fp32`},
		// Resume keeps the recorded precision; an older checkpoint's is fp32.
		{"cfd3d", "", true, true, "bf16", "bf16", ""},
		{"cfd3d", "bf16", true, true, "bf16", "bf16", ""},
		{"cfd3d", "", true, true, "", "fp32", ""},
		{"cfd3d", "fp32", true, true, "bf16", "", "train: --precision fp32 cannot be combined with --resume of a bf16 run"},
		{"burgers", "bf16", true, true, "fp32", "", "train: --precision bf16 cannot be combined with --resume of a fp32 run"},
		{"cfd3d", "", false, true, "bf16", "", "train: the run was trained with --precision bf16, which needs the CUDA backend (bin/uhno-cuda)"},
		{"cfd3d", "", false, true, "fp32", "fp32", ""},
	}
	for _, c := range cases {
		p, note, err := choosePrecision(c.task, c.flag, c.autocast, c.resume, c.recorded)
		if c.want == "" {
			if err == nil || !strings.HasPrefix(err.Error(), c.note) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%+v: got %q, %v; want the one-line error %q", c, p, err, c.note)
			}
			continue
		}
		if err != nil || p != c.want || note != c.note {
			t.Errorf("%+v: got %q, note %q, %v; want %q, note %q", c, p, note, err, c.want, c.note)
		}
	}
}
