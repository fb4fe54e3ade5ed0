package experiment

import (
	"slices"
	"strings"
	"testing"
)

func TestParseModes(t *testing.T) {
	tests := []struct {
		spec    string
		want    []string
		wantErr string
	}{
		{spec: "A-I", want: []string{"full", "A", "B", "C", "D", "E", "F", "G", "H", "I"}},
		{spec: "all", want: []string{"full", "A", "B", "C", "D", "E", "F", "G", "H", "I"}},
		{spec: "A,C,F-H", want: []string{"full", "A", "C", "F", "G", "H"}},
		{spec: "h, a ,c-c", want: []string{"full", "A", "C", "H"}},
		{spec: "full", want: []string{"full"}},
		{spec: "E,E,full", want: []string{"full", "E"}},
		{spec: "A,J", wantErr: `"J" is not a mode`},
		{spec: "F-C", wantErr: `"F-C" runs backwards`},
		{spec: "A,,B", wantErr: `"" is empty`},
		{spec: "AB", wantErr: `"AB" is not a mode`},
	}
	for _, tt := range tests {
		got, err := parseModes(tt.spec)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "--modes") {
				t.Errorf("%q: error %v, want one with %q", tt.spec, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%q: %v, %v; want %v", tt.spec, got, err, tt.want)
		}
	}
}

func TestParseSweep(t *testing.T) {
	tests := []struct {
		spec, key string
		vals      []string
		wantErr   string
	}{
		{spec: "spar.rho0=0.1,0.3, 0.5", key: "spar.rho0", vals: []string{"0.1", "0.3", "0.5"}},
		{spec: "optim.lr=1e-3", key: "optim.lr", vals: []string{"1e-3"}},
		{spec: "spar.rho0", wantErr: "want key=v1,v2"},
		{spec: "=0.1", wantErr: "want key=v1,v2"},
		{spec: "spar.rho0=", wantErr: "want key=v1,v2"},
		{spec: "spar.rho0=0.1,,0.2", wantErr: "an empty value"},
		{spec: "spar.rho0=0.1,0.1", wantErr: "value 0.1 appears twice"},
	}
	for _, tt := range tests {
		key, vals, err := parseSweep(tt.spec)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: error %v, want one with %q", tt.spec, err, tt.wantErr)
			}
			continue
		}
		if err != nil || key != tt.key || !slices.Equal(vals, tt.vals) {
			t.Errorf("%q: %q %v %v", tt.spec, key, vals, err)
		}
	}
}

func TestConfigDiff(t *testing.T) {
	a := taskConfig(t, "burgers")
	if d := configDiff(a, a); d != "" {
		t.Errorf("equal configurations differ in %s", d)
	}
	b := a
	b.Optim.Steps = 300
	b.SPAR.Rho0 = 0.5
	if d := configDiff(a, b); !strings.HasPrefix(d, "optim.steps: ") {
		t.Errorf("diff %q, want the first differing key optim.steps", d)
	}
}
