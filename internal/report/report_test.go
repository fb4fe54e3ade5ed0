package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/bench"
	"uhno/internal/eval"
	"uhno/internal/testutil"
)

// TestWrite builds small inputs of every kind, writes the report and
// checks its rows, the paper's values beside ours, the statements of
// contradiction and the figures.
func TestReportWrite(t *testing.T) {
	cases := []struct {
		name   string
		inputs func(t *testing.T, root string) []string
		want   []string // substrings of report.md
		absent []string
		// contradictions is the number the report must state; figures
		// the number of PNGs.
		contradictions, figures int
		// summary are lines Result.Summary must hold.
		summary []string
	}{
		{
			name: "burgers eval, FNO ahead of U-HNO",
			inputs: func(t *testing.T, root string) []string {
				return []string{writeEval(t, root, "eval-burgers", "burgers", 1,
					fixtureModel{"uhno", 620000, 0.06, 0.07}, fixtureModel{"fno", 600000, 0.0012, 0.002})}
			},
			want: []string{
				"### Tab. main-acc, 1D Burgers (rollout relL2)",
				"| uhno (0.62M) | U-HNO | 0.06 [0.057, 0.063] | 0.0416 [0.0402, 0.043] | 1.44x | no |",
				"| fno (0.6M) | FNO | 0.0012 [0.00114, 0.00126] | 0.1229 [0.12, 0.126] |",
				"0.0418 [0.0405, 0.0431]", // main-acc-h1
				"**Contradicts the paper:** in relL2 the paper ranks U-HNO (0.0416) ahead of FNO (0.1229); ours ranks fno (0.6M)",
				"our intervals do not overlap",
				"0.045 [0.043, 0.047]", // stability, Burgers U-HNO MSE
				"The paper's Tab. stability is at 4x the training horizon; this evaluation is at x1",
				"0.015", "0.004", // spectral, Burgers U-HNO low and SF
				// the paper's E_b beside the pooled ones, the per-frame ones ours only
				"| E_low pooled, ours | E_low pooled, paper | E_mid pooled, ours | E_mid pooled, paper | E_high pooled, ours | E_low per-frame, ours | E_mid per-frame, ours | E_high per-frame, ours | SF, ours | SF, paper |",
				"Command: not recorded in results.json; reconstructed from it: `uhno eval --checkpoint runs/burgers-uhno/step-00000100 --checkpoint runs/burgers-fno/step-00000100 --trajectories 10 --resamples 1000 --seed 3 --out",
				"| Tab. main-acc | `",
				"### Tab. fno-wider, 1D Burgers",
				"This evaluation has no wider FNO",
				"| Tab. cost | not rebuilt |",
				// Tab. stability at x1 is not the paper's horizon: reported, not counted
				"Differs from the paper (at another horizon than the paper's table, so not counted as a contradiction): in MSE the paper ranks U-HNO",
				"| table | task | metric | pairs | reversed | resolved | Kendall's tau | resolved reversals: ours ahead (by) |",
				"| Tab. main-acc | burgers | relL2 | 1 | 1 | 1 | -1.00 | FNO ahead of U-HNO (50.0x) | trajectories, one run |",
				// one run per model: what "resolved" resolves is said
				"resolved at 95% for these runs (intervals over the test trajectories of one training run per model, without training variance)",
			},
			absent: []string{"| Tab. stability | burgers |"},
			// relL2, relH1 and the fno-wider pair twice, E_low, E_mid, SF.
			contradictions: 7,
			summary: []string{"Tab. main-acc, burgers, relL2: 1 of 1 ranked pairs reversed, 1 resolved at 95% (FNO ahead of U-HNO (50.0x)); intervals over trajectories, one run",
				"Tab. fno-wider, burgers, relH1: 1 of 1 ranked pairs reversed, 1 resolved at 95% (FNO ahead of U-HNO (35.0x))"},
		},
		{
			name: "burgers at x1 and x4: each table from the paper's horizon only",
			inputs: func(t *testing.T, root string) []string {
				return []string{
					writeEval(t, root, "eval-burgers", "burgers", 1, fixtureModel{"uhno", 620000, 0.06, 0.07}, fixtureModel{"fno", 600000, 0.0012, 0.002}),
					writeEval(t, root, "eval-burgers-long", "burgers", 4, fixtureModel{"uhno", 620000, 0.06, 0.07}, fixtureModel{"fno", 600000, 0.0012, 0.002}),
				}
			},
			want: []string{
				"rollout of 100 steps (horizon x4)", // the stability table's source
				"| Tab. stability | burgers | MSE | 1 | 1 | 1 | -1.00 | FNO ahead of U-HNO (",
				"| Tab. main-acc | burgers | relL2 | 1 | 1 | 1 | -1.00 |",
			},
			absent: []string{"This evaluation is at x4 the training horizon", "The paper's Tab. stability is at 4x the training horizon; this evaluation is at x1",
				"Differs from the paper (at another horizon"},
			// x1: relL2, relH1, E_low, E_mid, SF, the fno-wider pair twice; x4: MSE and E-drift in Tab. stability
			contradictions: 9,
			summary:        []string{"Tab. stability, burgers, E-drift: 1 of 1 ranked pairs reversed"},
		},
		{
			name: "burgers eval with baselines: their paper rows beside them",
			inputs: func(t *testing.T, root string) []string {
				return []string{writeEval(t, root, "eval-burgers-all", "burgers", 1,
					fixtureModel{"uhno", 620000, 0.03, 0.035}, fixtureModel{"convfno", 660000, 0.06, 0.1},
					fixtureModel{"fno", 600000, 0.08, 0.15}, fixtureModel{"wno", 650000, 0.1, 0.2})}
			},
			want: []string{
				"| convfno (0.66M) | Conv-FNO | 0.06 [0.057, 0.063] | 0.089 [0.086, 0.092] |",
				"| wno (0.65M) | WNO | 0.1 [0.095, 0.105] | 0.1432 [0.14, 0.147] |",
				"0.1562 [0.152, 0.16]", // main-acc-h1, Conv-FNO
				"Agrees with the paper's order in relL2: U-HNO ahead of Conv-FNO, U-HNO ahead of FNO, U-HNO ahead of WNO, Conv-FNO ahead of FNO, Conv-FNO ahead of WNO, FNO ahead of WNO.",
				// Tab. stability: the paper has WNO ahead of FNO in MSE and E-drift; ours the other way
				"in MSE the paper ranks WNO (0.131) ahead of FNO (0.155); ours ranks fno (0.6M)",
				"| Tab. main-acc | burgers | relL2 | 6 | 0 | 0 | 1.00 | — |",
				"| Tab. spectral | burgers | SF | 6 | 1 | 1 | 0.67 | FNO ahead of WNO (1.25x) |",
			},
			// Tab. fno-wider has no rows for the other baselines
			absent: []string{"| convfno (0.66M) | Conv-FNO | 0.66 |", "| wno (0.65M) | WNO | 0.65 |"},
			// the paper has WNO ahead of FNO in Tab. spectral's E_low,
			// E_mid and SF; ours the other way (and in Tab. stability's MSE
			// and E-drift, but at x1, not the paper's horizon: not counted)
			contradictions: 3,
		},
		{
			name: "ns2d eval at 4x, U-HNO ahead",
			inputs: func(t *testing.T, root string) []string {
				return []string{writeEval(t, root, "eval-ns2d-long", "ns2d", 4,
					fixtureModel{"uhno", 620000, 0.005, 0.008}, fixtureModel{"fno", 600000, 0.006, 0.0095}, fixtureModel{"uhno-E", 620000, 0.009, 0.011})}
			},
			want: []string{
				"| uhno-E (0.62M) | — |",
				"Agrees with the paper's order in relL2: U-HNO ahead of FNO.",
				"This evaluation is at x4 the training horizon (40 steps); the paper's Tab. main-acc is at the training horizon.",
				"0.0066 [0.0063, 0.0069]", // stability, NS-2D U-HNO MSE
				"0.0082 [0.0079, 0.0085]", // stability, NS-2D FNO MSE
				"--horizon-mult 4",
			},
			absent: []string{"this evaluation is at x4 (40 steps), so the values are not like for like", "Tab. fno-wider, "},
		},
		{
			name: "ks eval with crashes: a model that crashed everywhere ranks last, a partial one says over how many",
			inputs: func(t *testing.T, root string) []string {
				return []string{writeEvalCrashes(t, root, "eval-ks-crash", "ks", 1, map[string]int{"gno": 10, "loglofno": 1},
					fixtureModel{"uhno", 620000, 0.1, 0.12}, fixtureModel{"gno", 660000, 0, 0}, fixtureModel{"loglofno", 650000, 0.3, 0.35})}
			},
			want: []string{
				"| gno (0.66M) | GNO | crashed (10 of 10 trajectories) | 0.554 [0.542, 0.566] | — | — |",
				"| loglofno (0.65M) | LogLo-FNO | 0.3 [0.285, 0.315] over the 9 of 10 trajectories that did not crash |",
				// the paper has GNO (0.554) behind U-HNO (0.405) and LogLo-FNO (0.4152): ours agrees
				"Agrees with the paper's order in relL2: U-HNO ahead of GNO, U-HNO ahead of LogLo-FNO, LogLo-FNO ahead of GNO.",
			},
			absent: []string{"| gno (0.66M) | GNO | n/a |"},
		},
		{
			name: "ks eval with crashes, reversed: a crash everywhere counts against the paper's order",
			inputs: func(t *testing.T, root string) []string {
				return []string{writeEvalCrashes(t, root, "eval-ks-crash2", "ks", 1, map[string]int{"uhno": 10},
					fixtureModel{"uhno", 620000, 0.1, 0.12}, fixtureModel{"gno", 660000, 0.5, 0.6})}
			},
			want: []string{
				"ours ranks gno (0.66M) (0.5 [0.475, 0.525]) ahead of uhno (0.62M) (crashed on every trajectory), by uhno (0.62M)'s crashes; our intervals do not overlap",
				"| Tab. main-acc | ks | relL2 | 1 | 1 | 1 | -1.00 | GNO ahead of U-HNO (U-HNO's crashes) |",
			},
			contradictions: 2, // relL2 and relH1
		},
		{
			name: "ks eval: no stability or spectral column in the paper",
			inputs: func(t *testing.T, root string) []string {
				return []string{writeEval(t, root, "eval-ks", "ks", 1, fixtureModel{"uhno", 620000, 0.4, 0.41})}
			},
			want: []string{"The paper's Tab. stability has no ks column: ours only.", "The paper's Tab. spectral has no ks column: ours only.",
				"0.405 [0.395, 0.415]"},
		},
		{
			name: "burgers ablation: F beats Full, B most damaging",
			inputs: func(t *testing.T, root string) []string {
				return []string{writeAblation(t, root, "ablate-burgers", "burgers", []string{"full", "A", "B", "F"},
					map[string][2]float64{"full": {0.05, 0.06}, "A": {0.1, 0.12}, "B": {0.2, 0.3}, "F": {0.04, 0.05}})}
			},
			want: []string{
				"### Ablation, 1D Burgers",
				"Command: `uhno ablate --task burgers --modes A-I --steps 200`",
				"| A: NoLocal | `", "0.1502", "0.1714", "0.0082",
				"| A: NoLocal | 4.00x | 13.67x | 2.00x | 3.61x | 2.00x | 4.10x |",
				"**Contradicts the paper:** F: NoSPAR beats Full U-HNO in relL2 (factor 0.80x",
				"the paper's most damaging change is A: NoLocal (3.61x); ours is B: NoGlobal (4.00x)",
				"Spearman rank correlation",
				"![Fig. burgers-ablation-bars (burgers)",
				"| Tab. burgers-ablation | `",
			},
			contradictions: 5, // F beats Full in mse, relL2, relH1; most damaging relL2, relH1
			figures:        1,
			// in the summary, F's three metrics are one line
			summary: []string{"ablation, burgers (", "F: NoSPAR beats Full U-HNO in mse (0.64x), relL2 (0.80x), relH1 (0.83x), resolved at 95% in 3 of 3"},
		},
		{
			name: "ns2d ablation: Tab. ablation-extra columns",
			inputs: func(t *testing.T, root string) []string {
				return []string{writeAblation(t, root, "ablate-ns2d", "ns2d", []string{"full", "A"},
					map[string][2]float64{"full": {0.006, 0.007}, "A": {0.02, 0.021}})}
			},
			want:    []string{"Paper values: Tab. ablation-extra and Tab. ablation-extra-h1, ns2d column.", "0.0178", "0.0207", "0.0063", "0.007"},
			absent:  []string{"Contradicts"},
			figures: 1,
		},
		{
			name: "rho0 sweep with its minimum far from 0.3",
			inputs: func(t *testing.T, root string) []string {
				return []string{writeSweep(t, root, "sweep", []string{"0.1", "0.3", "0.7"}, []float64{0.08, 0.06, 0.03})}
			},
			want: []string{"### Sweep of spar.rho0, 1D Burgers", "| 0.7 | `", "Command: not recorded in ablation.json",
				"the paper finds endpoint relH1 near its minimum at spar.rho0 = 0.3; ours is lowest at 0.7", "![Fig. training-dynamics (f)"},
			contradictions: 1,
			figures:        1,
		},
		{
			name: "bench JSON at the paper's shape",
			inputs: func(t *testing.T, root string) []string {
				p := filepath.Join(root, "cost.json")
				writeBench(t, p)
				return []string{p}
			},
			want: []string{"### Tab. cost: `", "Test CPU 9000", "| uhno C0=3 | ns2d | [16 10 128 128] | U-HNO | 0.5662 | 0.6187 | 0.1105 | 0.8115 | 35.08 [33.33, 38.59] | 4.6 |",
				"| fno width=16 | ns2d | [16 10 128 128] | FNO | 0.5934 | 0.5946 | 0.2782 | 0.0372 |",
				"| uhno-F C0=3 | ns2d | [16 10 128 128] | F | ", "0.8105",
				"U-HNO / FNO at ns2d[16 10 128 128]: params ours 0.95x (paper 1.04x), FLOPs ours 0.40x (paper 21.8x)",
				"**Contradicts the paper:** at the paper's shape U-HNO costs 21.8x FNO's FLOPs in the paper; ours 0.40x.",
				"### Tab. cost-spar", "| ns2d | uhno C0=3 / uhno-F C0=3 | +0.02% | +0.07% | +1.81% | +0.12% |"},
			contradictions: 1,
		},
		{
			// uhno reproduce benches each model into its own file; the
			// FNO-wider row is an FNO named TASK/fno-wider.
			name: "bench JSONs of one model each, as uhno reproduce writes them",
			inputs: func(t *testing.T, root string) []string {
				var paths []string
				for _, r := range []bench.Result{benchResult("ns2d/gno", "gno", 566227, 2.743, 132.2, 50.93),
					benchResult("ns2d/fno-wider", "fno", 3165200, 0.7302, 32.8, 9.918)} {
					p := filepath.Join(root, "cost-"+strings.TrimPrefix(r.Name, "ns2d/")+".json")
					writeJSON(t, p, bench.Report{Format: benchFormat, Version: "test", Preset: "cost-ns2d",
						Host: bench.Host{OS: "linux", Arch: "amd64", CPU: "Test CPU 9000", CPUs: 2, GOMAXPROCS: 2, Go: "go1.26"}, Threads: 2,
						Results: []bench.Result{r}})
					paths = append(paths, p)
				}
				return paths
			},
			want: []string{"| ns2d/gno | ns2d | [16 10 128 128] | GNO | 0.5662 | 0.6369 | 2.743 | 5.1999 |",
				"| ns2d/fno-wider | ns2d | [16 10 128 128] | FNO-wider | 3.165 | 3.18 | 0.7302 | 0.205 |"},
			absent: []string{"No row has the paper's shape", "| FNO | 3.165"},
		},
		{
			name: "training runs: Full and mode E",
			inputs: func(t *testing.T, root string) []string {
				return []string{writeTrainRun(t, root, "burgers-uhno", "burgers", "full"), writeTrainRun(t, root, "burgers-uhno-E", "burgers", "E")}
			},
			want: []string{"## Training runs (Fig. training-dynamics)", "| 100 / 100 | 0.01 at step 100 (0.005, 0.003333, 0.01) | 0.02 (step 100) |",
				"model.ablation E", "command not recorded", "![Training and validation loss of the burgers runs.](figures/training_loss_burgers.png)",
				"![Fig. training-dynamics (a), burgers", "![Fig. training-dynamics (b), burgers", "![Fig. training-dynamics (c), burgers",
				"![Fig. training-dynamics (d), burgers", "![Fig. training-dynamics (e), burgers: loss terms of Full ("},
			absent:  []string{"Panel (e) of the paper compares Full with mode E"},
			figures: 7, // losses, then dynamics.Figures: (a), (b) per run, (c), (d), (e)
		},
		{
			name: "a run still writing its log",
			inputs: func(t *testing.T, root string) []string {
				dir := writeTrainRun(t, root, "burgers-uhno", "burgers", "full")
				f, err := os.OpenFile(filepath.Join(dir, "log.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(`{"kind":"train","step":110,"lo`)
				f.Close()
				return []string{dir}
			},
			want:    []string{"log.jsonl` ends in a partial line (a run still writing it?), left out.", "| 100 / 100 | 0.01 at step 100 "},
			figures: 6, // losses, (a), (b), (c), (d), (e)
		},
		{
			name: "unrecognised directory and a step directory are skipped",
			inputs: func(t *testing.T, root string) []string {
				junk := filepath.Join(root, "junk")
				step := filepath.Join(root, "run", "step-00000100")
				for _, d := range []string{junk, step} {
					if err := os.MkdirAll(d, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.WriteFile(filepath.Join(step, "manifest.json"), []byte("{}"), 0o644); err != nil {
					t.Fatal(err)
				}
				young := filepath.Join(root, "young")
				if err := os.MkdirAll(young, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(young, "log.jsonl"), nil, 0o644); err != nil {
					t.Fatal(err)
				}
				return []string{junk, step, young, writeEval(t, root, "eval", "darcy", 1, fixtureModel{"uhno", 620000, 0.007, 0.016})}
			},
			want: []string{"Skipped:", "junk`: not recognised: holds no results.json", "step-00000100`: not recognised: a checkpoint step directory",
				"young`: not recognised: a training log without a checkpoint yet (no latest)",
				"Task darcy (`", "is a single prediction: no rollout, so no stability table."},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			out := filepath.Join(root, "report")
			res, err := Write(Options{Inputs: c.inputs(t, root), Dir: out, Version: "test", Command: "uhno report"})
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(out, ReportFile))
			if err != nil {
				t.Fatal(err)
			}
			md := string(raw)
			for _, w := range c.want {
				if !strings.Contains(md, w) {
					t.Errorf("report lacks %q", w)
				}
			}
			for _, w := range c.absent {
				if strings.Contains(md, w) {
					t.Errorf("report holds %q", w)
				}
			}
			if got := strings.Count(md, "**Contradicts the paper:**"); got != c.contradictions || len(res.Contradictions) != c.contradictions {
				t.Errorf("%d contradictions stated (%d returned), want %d: %q", got, len(res.Contradictions), c.contradictions, res.Contradictions)
			}
			for _, w := range c.summary {
				if !slices.ContainsFunc(res.Summary, func(l string) bool { return strings.Contains(l, w) }) {
					t.Errorf("summary lacks %q: %q", w, res.Summary)
				}
			}
			if len(res.Figures) != c.figures {
				t.Errorf("%d figures, want %d: %v", len(res.Figures), c.figures, res.Figures)
			}
			for _, f := range res.Figures {
				testutil.CheckPNG(t, f, 0, 0)
				if rel, _ := filepath.Rel(out, f); !strings.Contains(md, "("+filepath.ToSlash(rel)+")") {
					t.Errorf("report does not link %s", rel)
				}
			}
			if t.Failed() {
				t.Logf("report.md:\n%s", md)
			}
		})
	}
}

// TestReportNoFigures checks Options.NoFigures: the same tables and
// contradictions, no PNG (no figures directory at all), no image link,
// and the paper's figures listed as not drawn rather than rebuilt.
func TestReportNoFigures(t *testing.T) {
	inputs := func(root string) []string {
		return []string{
			writeAblation(t, root, "ablate-burgers", "burgers", []string{"full", "A", "B", "F"},
				map[string][2]float64{"full": {0.05, 0.06}, "A": {0.1, 0.12}, "B": {0.2, 0.3}, "F": {0.04, 0.05}}),
			writeSweep(t, root, "sweep", []string{"0.1", "0.3", "0.7"}, []float64{0.08, 0.06, 0.03}),
			writeTrainRun(t, root, "burgers-uhno", "burgers", "full"), writeTrainRun(t, root, "burgers-uhno-E", "burgers", "E"),
		}
	}
	write := func(noFigures bool) (*Result, string, string) {
		root := t.TempDir()
		out := filepath.Join(root, "report")
		res, err := Write(Options{Inputs: inputs(root), Dir: out, Version: "test", Command: "uhno report", NoFigures: noFigures})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(out, ReportFile))
		if err != nil {
			t.Fatal(err)
		}
		return res, string(raw), out
	}
	with, mdWith, _ := write(false)
	res, md, out := write(true)
	if len(with.Figures) == 0 {
		t.Fatal("the inputs draw no figure even without NoFigures")
	}
	if len(res.Figures) != 0 || strings.Contains(md, "![") {
		t.Errorf("NoFigures drew %v; report links an image: %v", res.Figures, strings.Contains(md, "!["))
	}
	if _, err := os.Stat(filepath.Join(out, FiguresDir)); err == nil {
		t.Errorf("NoFigures made %s", filepath.Join(out, FiguresDir))
	}
	for _, w := range []string{"| Fig. burgers-ablation-bars | not drawn (--no-figures) |", "| Fig. training-dynamics | not drawn (--no-figures) |",
		"| A: NoLocal | 4.00x | 13.67x | 2.00x | 3.61x | 2.00x | 4.10x |", "### Sweep of spar.rho0, 1D Burgers", "## Training runs (Fig. training-dynamics)"} {
		if !strings.Contains(md, w) {
			t.Errorf("report lacks %q", w)
		}
	}
	if !strings.Contains(mdWith, "| Fig. burgers-ablation-bars | `") {
		t.Error("with figures, Fig. burgers-ablation-bars is not listed as rebuilt")
	}
	if len(res.Contradictions) != len(with.Contradictions) || len(res.Summary) != len(with.Summary) {
		t.Errorf("NoFigures changed what contradicts the paper: %d/%d contradictions, %d/%d summary lines",
			len(res.Contradictions), len(with.Contradictions), len(res.Summary), len(with.Summary))
	}
	if t.Failed() {
		t.Logf("report.md:\n%s", md)
	}
}

// TestWriteErrors checks that bad input gives a one-line error naming the
// file and what was expected, and writes no report.
func TestReportWriteErrors(t *testing.T) {
	cases := []struct {
		name  string
		setup func(t *testing.T, root string) []string
		want  []string
	}{
		{"malformed results.json", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "eval", ResultsFile)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte("{\n  \"format\": \"uhno-eval/1\",\n  \"task\": burgers\n}"), 0o644)
			return []string{filepath.Dir(p)}
		}, []string{"eval/results.json: invalid JSON at line 3", "want results.json of uhno eval (format uhno-eval/1)"}},
		{"results.json of another format", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "eval", ResultsFile)
			writeJSON(t, p, map[string]any{"format": "uhno-eval/9"})
			return []string{filepath.Dir(p)}
		}, []string{"eval/results.json: format \"uhno-eval/9\"; want results.json of uhno eval"}},
		{"results.json with a wrong type", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "eval", ResultsFile)
			writeJSON(t, p, map[string]any{"format": evalFormat, "task": "burgers", "rollout_steps": "many"})
			return []string{filepath.Dir(p)}
		}, []string{"eval/results.json: invalid JSON at line", "rollout_steps", "want results.json of uhno eval"}},
		{"results.json of an unknown task", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "eval", ResultsFile)
			writeJSON(t, p, map[string]any{"format": evalFormat, "task": "heat"})
			return []string{filepath.Dir(p)}
		}, []string{"eval/results.json: task \"heat\" is not one of burgers"}},
		{"truncated ablation.json", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "ab", AblationFile)
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(`{"format": "uhno-ablation/1", "entries": [`), 0o644)
			return []string{filepath.Dir(p)}
		}, []string{"ab/ablation.json: invalid JSON", "want ablation.json of uhno ablate (format uhno-ablation/1)"}},
		{"bench JSON without results", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "bench.json")
			writeJSON(t, p, map[string]any{"format": benchFormat})
			return []string{p}
		}, []string{"bench.json: no results; want the JSON of uhno bench --json"}},
		{"a JSON file of no known format", func(t *testing.T, root string) []string {
			p := filepath.Join(root, "other.json")
			writeJSON(t, p, map[string]any{"x": 1})
			return []string{p}
		}, []string{"other.json: format \"\"; want results.json"}},
		{"malformed log.jsonl", func(t *testing.T, root string) []string {
			dir := writeTrainRun(t, root, "run", "burgers", "full")
			f, _ := os.OpenFile(filepath.Join(dir, "log.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString("{\"kind\": \"train\", \"step\": \n")
			f.Close()
			return []string{dir}
		}, []string{"run/log.jsonl: line 17: invalid JSON at column 25", "want the JSON-lines log of uhno train"}},
		{"corrupt checkpoint", func(t *testing.T, root string) []string {
			dir := writeTrainRun(t, root, "run", "burgers", "full")
			os.WriteFile(filepath.Join(dir, "step-00000100", "state.json"), []byte("{}"), 0o644)
			return []string{dir}
		}, []string{"report: training run ", "state.json has 2 bytes"}},
		{"missing path", func(t *testing.T, root string) []string {
			return []string{filepath.Join(root, "nope")}
		}, []string{"--runs ", "nope: no such file or directory"}},
		{"no inputs", func(t *testing.T, root string) []string { return nil }, []string{"report: no inputs; give --runs DIR..."}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			out := filepath.Join(root, "report")
			_, err := Write(Options{Inputs: c.setup(t, root), Dir: out})
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "report: ") {
				t.Errorf("error is not one line starting with \"report: \": %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if _, err := os.Stat(filepath.Join(out, ReportFile)); err == nil {
				t.Errorf("a report was written despite the error")
			}
		})
	}
}

// TestSpearman checks the rank correlation on known cases.
func TestReportSpearman(t *testing.T) {
	for _, c := range []struct {
		x, y []float64
		want float64
	}{
		{[]float64{1, 2, 3}, []float64{10, 20, 30}, 1},
		{[]float64{1, 2, 3}, []float64{30, 20, 10}, -1},
		{[]float64{1, 2, 3, 4}, []float64{1, 3, 2, 4}, 0.8},
	} {
		if got := spearman(c.x, c.y); got < c.want-1e-12 || got > c.want+1e-12 {
			t.Errorf("spearman(%v, %v) = %g, want %g", c.x, c.y, got, c.want)
		}
	}
}

// TestReportBuiltC0: the list of evaluated checkpoints gives U-HNO's
// model.c0 and, where --params built it at another width, that width
// (results.json's built_c0), and no U-HNO settings for a baseline. The
// configuration's c0 alone (32 for every task) read as the width of a
// model --params 0.62M had built at C0 = 3.
func TestReportBuiltC0(t *testing.T) {
	root := t.TempDir()
	dir := writeEval(t, root, "eval-ns2d", "ns2d", 1,
		fixtureModel{"uhno", 566199, 0.06, 0.07}, fixtureModel{"uhno-F", 566126, 0.03, 0.04},
		fixtureModel{"fno", 593393, 0.006, 0.01}, fixtureModel{"cno", 600000, 0.02, 0.03})
	path := filepath.Join(dir, ResultsFile)
	var res eval.Results
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	res.Models[0].BuiltC0 = 3  // scaled by --params
	res.Models[1].BuiltC0 = 32 // the configuration's own width: no note
	writeJSON(t, path, res)
	out := filepath.Join(root, "report")
	if _, err := Write(Options{Inputs: []string{dir}, Dir: out, Version: "test", Command: "uhno report"}); err != nil {
		t.Fatal(err)
	}
	raw, err = os.ReadFile(filepath.Join(out, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	md := string(raw)
	for _, w := range []string{
		"566199 parameters, model.ablation full, model.c0 32 (built with C0 3: --params scaled it), optim.batch",
		"566126 parameters, model.ablation F, model.c0 32, optim.batch",
		"593393 parameters, optim.batch",
		"600000 parameters, optim.batch",
	} {
		if !strings.Contains(md, w) {
			t.Errorf("report lacks %q", w)
		}
	}
	if t.Failed() {
		t.Logf("report.md:\n%s", md)
	}
}
