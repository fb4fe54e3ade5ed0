package reproduce

import (
	"slices"
	"strings"
	"testing"
)

func dirs(g *Grid) []string {
	var out []string
	for _, r := range g.Runs {
		out = append(out, r.Dir)
	}
	return out
}

func TestPlanSizes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		o     Options
		runs  int
		evals int
		bench int
	}{
		// 7 self-generated tasks x 8 models.
		{"main-acc without 3D-CFD", Options{Tables: []string{"main-acc"}}, 56, 7, 0},
		{"main-acc with 3D-CFD", Options{Tables: []string{"main-acc"}, CFD3D: true}, 64, 8, 0},
		// Burgers and NS-2D (cfd3d missing): 16 runs, a 1x and a 4x eval each.
		{"stability", Options{Tables: []string{"stability"}}, 16, 4, 0},
		{"spectral", Options{Tables: []string{"spectral"}}, 16, 2, 0},
		// Burgers: uhno, fno, fno-wider.
		{"fno-wider", Options{Tables: []string{"fno-wider"}}, 3, 1, 0},
		// Burgers and NS-2D: Full and A-I.
		{"ablation-extra", Options{Tables: []string{"ablation-extra"}}, 20, 2, 0},
		{"cost", Options{Tables: []string{"cost"}}, 0, 0, 9},
		// Everything: 56 + fno-wider on burgers (1) + 9 modes x 2 tasks.
		{"all", Options{}, 56 + 1 + 18, 7 + 2, 9},
		{"issue's small grid", Options{Tasks: []string{"burgers", "darcy"}, Models: []string{"uhno", "fno"}}, 4 + 9, 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Plan(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Runs) != tc.runs || len(g.Evals) != tc.evals || len(g.Bench) != tc.bench {
				t.Errorf("runs %d evals %d bench %d, want %d %d %d; runs %v", len(g.Runs), len(g.Evals), len(g.Bench),
					tc.runs, tc.evals, tc.bench, dirs(g))
			}
			seen := map[string]bool{}
			for _, r := range g.Runs {
				if seen[r.Dir] {
					t.Errorf("run %s planned twice", r.Dir)
				}
				seen[r.Dir] = true
			}
		})
	}
}

func TestPlanSharesRuns(t *testing.T) {
	g, err := Plan(Options{Tables: []string{"main-acc", "main-acc-h1", "stability", "spectral", "fno-wider", "ablation-extra"}, Tasks: []string{"burgers"}})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(g.Runs, func(r Cell) bool { return r.Dir == "burgers/uhno" })
	if i < 0 {
		t.Fatalf("no burgers/uhno in %v", dirs(g))
	}
	want := []string{"main-acc", "main-acc-h1", "stability", "spectral", "fno-wider", "ablation-extra"}
	if !slices.Equal(g.Runs[i].Tables, want) {
		t.Errorf("burgers/uhno serves %v, want %v", g.Runs[i].Tables, want)
	}
	// Order: paper's model order, U-HNO, then the modes, then FNO-wider.
	got := strings.Join(dirs(g), " ")
	wantOrder := "burgers/fno burgers/gno burgers/cno burgers/wno burgers/ffno burgers/convfno burgers/loglofno burgers/uhno burgers/ablate/A"
	if !strings.HasPrefix(got, wantOrder) || !strings.HasSuffix(got, "burgers/ablate/I burgers/fno-wider") {
		t.Errorf("order %s", got)
	}
	var stab Eval
	for _, e := range g.Evals {
		if e.HorizonMult == 4 {
			stab = e
		}
	}
	if len(stab.Runs) != 8 || slices.Contains(stab.Runs, "burgers/fno-wider") {
		t.Errorf("4x evaluation over %v, want the eight models", stab.Runs)
	}
}

func TestPlanMissingCFD3D(t *testing.T) {
	g, err := Plan(Options{Tables: []string{"fno-wider"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Missing) != 3 || !strings.Contains(g.Missing[0], "cfd3d/") || !strings.Contains(g.Missing[0], "--pdebench") {
		t.Errorf("missing %v", g.Missing)
	}
}

func TestPlanRefusals(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Tables: []string{"main-accc"}}, `--tables: unknown "main-accc"`},
		{Options{Tasks: []string{"navier"}}, `--tasks: unknown "navier"`},
		{Options{Models: []string{"unet"}}, `--models: unknown "unet"`},
		{Options{Tables: []string{"spectral"}, Tasks: []string{"darcy"}}, "the grid is empty"},
	} {
		_, err := Plan(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Plan(%+v) = %v, want one line containing %q", tc.o, err, tc.want)
		}
	}
}

// TestModelsInPaperOrder: the grid's models are Tab. main-acc's rows,
// through the registry's paper names, in the paper's order.
func TestModelsInPaperOrder(t *testing.T) {
	want := []string{"fno", "gno", "cno", "wno", "ffno", "convfno", "loglofno", "uhno"}
	if !slices.Equal(Models, want) {
		t.Errorf("Models %v, want %v", Models, want)
	}
}

// TestPlanModes: --modes restricts Tab. ablation-extra's modes, and with
// it a task named in --tasks gets its ablation although the paper has no
// ablation column for it; without --modes, or with --tasks all, only the
// paper's columns do.
func TestPlanModes(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    Options
		want []string
	}{
		{"AC-2D, two modes, two seeds", Options{Tables: []string{"main-acc", "ablation-extra"}, Tasks: []string{"ac2d"},
			Models: []string{"uhno", "fno"}, Modes: "F,A", Seeds: []int64{0, 1}},
			[]string{"ac2d/fno", "ac2d/uhno", "ac2d/ablate/A", "ac2d/ablate/F",
				"ac2d/seed1/fno", "ac2d/seed1/uhno", "ac2d/seed1/ablate/A", "ac2d/seed1/ablate/F"}},
		{"a range on the paper's column", Options{Tables: []string{"ablation-extra"}, Tasks: []string{"ns2d"}, Modes: "C-E"},
			[]string{"ns2d/uhno", "ns2d/ablate/C", "ns2d/ablate/D", "ns2d/ablate/E"}},
		{"no --modes: AC-2D has no paper column", Options{Tables: []string{"main-acc", "ablation-extra"}, Tasks: []string{"ac2d"},
			Models: []string{"uhno"}}, []string{"ac2d/uhno"}},
		{"a regime, named: its accuracy cells and ablation, ours only", Options{Tables: []string{"main-acc", "stability", "ablation-extra"},
			Tasks: []string{"burgers-shock"}, Models: []string{"uhno", "fno"}, Modes: "F"},
			[]string{"burgers-shock/fno", "burgers-shock/uhno", "burgers-shock/ablate/F"}},
		{"--tasks all: the paper's columns", Options{Tables: []string{"ablation-extra"}, Tasks: []string{"all"}, Modes: "B"},
			[]string{"burgers/uhno", "burgers/ablate/B", "ns2d/uhno", "ns2d/ablate/B"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Plan(tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if got := dirs(g); !slices.Equal(got, tc.want) {
				t.Errorf("runs %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := Plan(Options{Tables: []string{"ablation-extra"}, Modes: "A,Z"}); err == nil || !strings.Contains(err.Error(), `--modes: "Z"`) {
		t.Errorf("--modes A,Z: error %v, want one naming --modes and Z", err)
	}
}
