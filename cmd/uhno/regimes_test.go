package main

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"uhno/internal/datagen"
)

// TestRegimeDataMatchesBurgersWithSets: a Burgers regime is the burgers
// task with a few --set overrides and its own name. Its data file must be
// the one `uhno datagen --task burgers --set ...` writes (same solver
// settings, hence the same h5 fingerprint), named after the regime, so that
// data generated before the regimes existed can be renamed to the regime's
// file name and found. The YAML values must therefore parse to exactly the
// float64 values the --set strings give.
func TestRegimeDataMatchesBurgersWithSets(t *testing.T) {
	cases := []struct {
		regime string
		sets   []string
	}{
		{"burgers-paper", []string{"pde.ic.sigma=4.303517070658851"}},
		{"burgers-shock", []string{"pde.nu=0.001", "pde.solver_grid=2048", "pde.dt=5e-5"}},
	}
	for _, tc := range cases {
		t.Run(tc.regime, func(t *testing.T) {
			reg, err := loadConfig(loadRequest{Task: tc.regime})
			if err != nil {
				t.Fatal(err)
			}
			set, err := loadConfig(loadRequest{Task: "burgers", Sets: tc.sets})
			if err != nil {
				t.Fatal(err)
			}
			if reg.Task != tc.regime {
				t.Fatalf("task %q, want %q", reg.Task, tc.regime)
			}
			renamed := set
			renamed.Task = tc.regime
			if !reflect.DeepEqual(reg, renamed) {
				t.Fatalf("%s.yaml differs from burgers.yaml with %v:\n%+v\n%+v", tc.regime, tc.sets, reg, renamed)
			}
			dir := t.TempDir()
			_, specReg, pathReg, n, err := datagen.Plan(datagen.Options{Config: reg, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			_, specSet, pathSet, nSet, err := datagen.Plan(datagen.Options{Config: set, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			fp := specReg.Fingerprint(n)
			if n != nSet || fp != specSet.Fingerprint(nSet) {
				t.Fatalf("fingerprint %s (n %d), burgers with %v gives %s (n %d)", fp, n, tc.sets, specSet.Fingerprint(nSet), nSet)
			}
			want := filepath.Join(dir, fmt.Sprintf("%s_seed0_n%d_%s.h5", tc.regime, n, fp[:10]))
			if pathReg != want || pathReg != strings.Replace(pathSet, "burgers_", tc.regime+"_", 1) {
				t.Fatalf("file %s, want %s (burgers with the sets: %s)", pathReg, want, pathSet)
			}
			t.Logf("%s: %s", tc.regime, filepath.Base(pathReg))
		})
	}
}
