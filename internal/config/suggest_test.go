package config

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestLevenshtein(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"optim.lr", "optim.lr", 0},
		{"optim.lrr", "optim.lr", 1},
		{"burger", "burgers", 1},
		{"kitten", "sitting", 3},
		{"ns2D", "ns2d", 1},
		{"σ", "s", 1}, // runes, not bytes
	}
	for _, tt := range tests {
		if got := levenshtein(tt.a, tt.b); got != tt.want {
			t.Errorf("levenshtein(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestNearest(t *testing.T) {
	names := TaskNames()
	tests := []struct {
		name   string
		want   string
		wantOK bool
	}{
		{"burger", "burgers", true},
		{"ns", "ks", true},
		{"darci", "darcy", true},
		{"cfd", "cfd3d", true},
		{"heat-equation", "", false},
	}
	for _, tt := range tests {
		got, ok := Nearest(tt.name, names)
		if ok != tt.wantOK || (ok && got != tt.want) {
			t.Errorf("Nearest(%q) = %q, %v; want %q, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
	if _, ok := Nearest("x", nil); ok {
		t.Error("Nearest with no candidates reported a match")
	}
}

func TestLookupTask(t *testing.T) {
	for _, name := range TaskNames() {
		spec, err := LookupTask(name)
		if err != nil || spec.Name != name {
			t.Errorf("LookupTask(%q) = %+v, %v", name, spec, err)
		}
		if spec.Dim < 1 || spec.Dim > 3 || spec.Title == "" || spec.Summary == "" {
			t.Errorf("task %s: incomplete spec %+v", name, spec)
		}
		for _, k := range spec.Optional {
			if !strings.HasPrefix(k, "pde.") {
				t.Errorf("task %s: optional key %q is not a pde key", name, k)
			}
		}
	}
	_, err := LookupTask("heat")
	want := `config: unknown task "heat"; valid tasks: burgers, ks, kdv, adv2d, ac2d, ns2d, darcy, cfd3d, burgers-paper, burgers-shock`
	if err == nil || err.Error() != want {
		t.Fatalf("LookupTask(heat) error = %v, want %q", err, want)
	}
}

// TestRegimes: the paper's eight tasks stay eight, each its own equation;
// each regime is a task of its own name that runs burgers' equation with
// burgers' keys, dimension and boundary.
func TestRegimes(t *testing.T) {
	if n := len(Tasks()); n != 8 {
		t.Fatalf("%d paper tasks, want 8", n)
	}
	for _, s := range Tasks() {
		if s.PDE != s.Name || s.Regime() {
			t.Errorf("paper task %s: PDE %q, regime %v", s.Name, s.PDE, s.Regime())
		}
	}
	burgers, err := LookupTask("burgers")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range Regimes() {
		names = append(names, s.Name)
		got, err := LookupTask(s.Name)
		if err != nil || !s.Regime() || got.PDE != "burgers" {
			t.Errorf("regime %s: LookupTask %+v, %v; want a regime of burgers", s.Name, got, err)
		}
		same := got
		same.Name, same.PDE, same.Title, same.Summary = burgers.Name, burgers.PDE, burgers.Title, burgers.Summary
		if fmt.Sprint(same) != fmt.Sprint(burgers) {
			t.Errorf("regime %s: spec %+v differs from burgers %+v beyond its names", s.Name, got, burgers)
		}
	}
	if want := []string{"burgers-paper", "burgers-shock"}; !slices.Equal(names, want) {
		t.Errorf("regimes %v, want %v", names, want)
	}
	if all := TaskNames(); !slices.Equal(all[8:], names) {
		t.Errorf("TaskNames %v: want the paper's eight, then the regimes", all)
	}
}

// TestTaskKeysExist checks that every key a task spec names is a real key.
func TestTaskKeysExist(t *testing.T) {
	leaves, _ := schema()
	var c Config
	values := map[string]bool{}
	for _, v := range c.taskValues() {
		values[v.key] = true
	}
	for _, spec := range Tasks() {
		for _, k := range append(append([]string{}, spec.Uses...), spec.Optional...) {
			if leaves[k].key == "" {
				t.Errorf("task %s names unknown key %q", spec.Name, k)
			}
			if !values[k] {
				t.Errorf("task %s names key %q that Validate does not check", spec.Name, k)
			}
		}
	}
}
