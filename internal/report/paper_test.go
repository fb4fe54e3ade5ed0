package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// texPath is the paper's LaTeX source relative to this package's
// directory (the repository's ../shared/paper/u-hno.tex). CI clones only
// the repository, so the check is skipped when it is absent.
var texPath = filepath.Join("..", "..", "..", "shared", "paper", "u-hno.tex")

var texNumber = regexp.MustCompile(`(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?`)

// texRows returns the body rows of the table labelled label: each row's
// cells, split on &, with the row name first.
func texRows(t *testing.T, tex, label string) [][]string {
	t.Helper()
	i := strings.Index(tex, `\label{`+label+`}`)
	if i < 0 {
		t.Fatalf("%s: no \\label{%s} in the tex", texPath, label)
	}
	seg := tex[i:]
	seg = seg[:strings.Index(seg, `\end{tabular}`)]
	seg = seg[strings.Index(seg, `\midrule`):]
	seg = strings.NewReplacer(`\midrule`, "", `\bottomrule`, "").Replace(seg)
	var rows [][]string
	for _, line := range strings.Split(seg, "\\\\\n") {
		if line = strings.TrimSpace(line); line != "" {
			rows = append(rows, strings.Split(line, "&"))
		}
	}
	return rows
}

// TestReportPaperMatchesTex checks every transcribed cell, every row name and
// the row order of the paper's tables against the LaTeX source.
func TestReportPaperMatchesTex(t *testing.T) {
	raw, err := os.ReadFile(texPath)
	if err != nil {
		t.Skipf("paper source not available (%v); CI clones only the repository", err)
	}
	tex := string(raw)
	name := strings.NewReplacer(`\textbf{`, "", "}", "", " (ours)", "", `$\Delta$`, "Δ", `\%`, "%")
	checked := 0
	for _, tab := range PaperTables {
		rows := texRows(t, tex, tab.Label)
		if len(rows) != len(tab.Rows) {
			t.Errorf("%s: %d rows in the tex, %d transcribed", tab.Label, len(rows), len(tab.Rows))
			continue
		}
		for i, cells := range rows {
			r := tab.Rows[i]
			if got := strings.TrimSpace(name.Replace(cells[0])); got != r.Name {
				t.Errorf("%s row %d: tex name %q, transcribed %q", tab.Label, i, got, r.Name)
			}
			if len(cells)-1 != len(tab.Columns) || len(r.Cells) != len(tab.Columns) {
				t.Errorf("%s row %q: %d cells in the tex, %d transcribed, %d columns", tab.Label, r.Name, len(cells)-1, len(r.Cells), len(tab.Columns))
				continue
			}
			for j, c := range cells[1:] {
				c = strings.TrimSpace(c)
				want := r.Cells[j]
				if c == `\textemdash` {
					if want != nil {
						t.Errorf("%s %s/%s: the tex has a dash, transcribed %+v", tab.Label, r.Name, tab.Columns[j], *want)
					}
					continue
				}
				var nums []float64
				for _, s := range texNumber.FindAllString(c, -1) {
					f, err := strconv.ParseFloat(s, 64)
					if err != nil {
						t.Fatalf("%s: %q: %v", tab.Label, s, err)
					}
					nums = append(nums, f)
				}
				switch {
				case want == nil:
					t.Errorf("%s %s/%s: tex %q, transcribed as a dash", tab.Label, r.Name, tab.Columns[j], c)
				case strings.Contains(c, `\shortstack`):
					if len(nums) != 3 || !want.CI || nums[0] != want.Mean || nums[1] != want.Low || nums[2] != want.High {
						t.Errorf("%s %s/%s: tex %q, transcribed %+v", tab.Label, r.Name, tab.Columns[j], c, *want)
					}
				default:
					if len(nums) != 1 || want.CI || nums[0] != want.Mean {
						t.Errorf("%s %s/%s: tex %q, transcribed %+v", tab.Label, r.Name, tab.Columns[j], c, *want)
					}
				}
				checked++
			}
		}
	}
	if checked < 300 {
		t.Errorf("checked %d cells, want all of them (over 300)", checked)
	}
	t.Logf("%d cells of %d tables match the tex", checked, len(PaperTables))
}

// TestPaperSpotValues pins a handful of values by hand, so that a wrong
// transcription is caught even without the tex.
func TestReportPaperSpotValues(t *testing.T) {
	for _, c := range []struct {
		tab       *Table
		row, col  string
		mean, low float64
	}{
		{&MainAcc, KeyUHNO, "burgers", 0.0416, 0.0402},
		{&MainAcc, KeyFNO, "burgers", 0.1229, 0.120},
		{&MainAccH1, KeyUHNO, "cfd3d", 0.772, 0.755},
		{&Stability, KeyUHNO, "ns2d/mse", 0.0066, 0.0063},
		{&Stability, KeyFNO, "cfd3d/crash", 0, 0},
		{&Spectral, "Conv-FNO", "ns2d/sf", 0.0021, 0.0021},
		{&Cost, KeyUHNO, ColGFLOPs, 0.8115, 0.8115},
		{&CostSPAR, "delta_pct", ColTrain, 13.0, 13.0},
		{&BurgersAblation, "A", "relH1", 0.1714, 0.1714},
		{&AblationExtra, "I", "cfd3d", 0.795, 0.795},
		{&AblationExtraH1, "E", "ns2d", 0.0113, 0.0113},
	} {
		got, ok := c.tab.Get(c.row, c.col)
		if !ok || got.Mean != c.mean || got.Low != c.low {
			t.Errorf("%s %s/%s = %+v (%v), want mean %g low %g", c.tab.Label, c.row, c.col, got, ok, c.mean, c.low)
		}
	}
	if _, ok := MainAcc.Get("CNO", "ac2d"); ok {
		t.Errorf("main-acc CNO/ac2d: the paper has a dash")
	}
}
