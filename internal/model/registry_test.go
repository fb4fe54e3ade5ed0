package model

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"uhno/internal/cpu"
)

// TestRegistryRecords checks the record's upgrade from older checkpoints
// and Build's refusals.
func TestRegistryRecords(t *testing.T) {
	for _, legacy := range []string{"uhno", "fno", "additive", "baseline"} {
		var r Record
		if err := json.Unmarshal([]byte(`{"model":"x","`+legacy+`":{"a":1}}`), &r); err != nil {
			t.Fatal(err)
		}
		r.Upgrade()
		if string(r.Spec) != `{"a":1}` {
			t.Errorf("%s: upgraded spec %s", legacy, r.Spec)
		}
		raw, _ := json.Marshal(r)
		if string(raw) != `{"model":"x","spec":{"a":1}}` {
			t.Errorf("%s: written as %s", legacy, raw)
		}
	}
	if _, _, err := Build(cpu.New(1), Record{Model: "nosuch", Spec: []byte(`{}`)}, 1); !errors.Is(err, ErrUnknownModel) {
		t.Errorf("unknown model: %v", err)
	}
	if _, _, err := Build(cpu.New(1), Record{Model: "fno", Spec: []byte(`[1]`)}, 1); err == nil || !strings.Contains(err.Error(), "the recorded fno spec cannot be read") {
		t.Errorf("bad spec: %v", err)
	}
	for _, tt := range []struct {
		model string
		mode  Mode
		want  bool
	}{{"uhno", ModeNoUShape, true}, {"fno", ModeFull, true}, {"fno", ModeMSE, true}, {"gno", ModeNoSPAR, false}, {"nosuch", ModeFull, false}} {
		if got := TakesMode(tt.model, tt.mode); got != tt.want {
			t.Errorf("TakesMode(%s, %s) = %v", tt.model, tt.mode, got)
		}
	}
}

// TestModeType checks the ablation mode type: labels, loss-only modes
// and the spelling of --mode.
func TestModeType(t *testing.T) {
	var lossOnly []string
	for _, m := range Modes() {
		if Mode(m).LossOnly() {
			lossOnly = append(lossOnly, m)
		}
		if Mode(m).Label() == m {
			t.Errorf("mode %s has no label", m)
		}
	}
	if !slices.Equal(lossOnly, []string{"full", "C", "D", "E"}) {
		t.Errorf("loss-only modes %v", lossOnly)
	}
	if Mode("FULL").Canonical() != ModeFull || Mode("f").Canonical() != ModeNoSPAR || Mode("x").Canonical().Valid() {
		t.Error("Canonical or Valid")
	}
	if Mode("G").Label() != "G: NoUShape" || Mode("Z").Label() != "Z" {
		t.Error("Label")
	}
}

// TestPaperNames: every model the paper reports has its table name, which
// leads back to it; the additive diagnostic and ablation modes have none.
func TestPaperNames(t *testing.T) {
	want := map[string]string{"uhno": "U-HNO", "fno": "FNO", "gno": "GNO", "cno": "CNO", "wno": "WNO", "ffno": "FFNO",
		"convfno": "Conv-FNO", "loglofno": "LogLo-FNO", "fno-wider": "FNO-wider", "additive": "", "uhno-A": "", "nosuch": ""}
	for name, paper := range want {
		if got := PaperName(name); got != paper {
			t.Errorf("PaperName(%q) = %q, want %q", name, got, paper)
		}
		if paper == "" {
			continue
		}
		if back, ok := ByPaperName(paper); !ok || back != name {
			t.Errorf("ByPaperName(%q) = %q, %v; want %q", paper, back, ok, name)
		}
	}
	if _, ok := ByPaperName(""); ok {
		t.Error(`ByPaperName("") found a model`)
	}
}
