package dynamics

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/testutil"
)

// readSynthetic writes a synthetic log and reads it back.
func readSynthetic(t *testing.T, steps int, stages []string, angles bool) *Series {
	t.Helper()
	s, err := Read(writeLog(t, strings.Join(syntheticLog(t, steps, stages, angles), "\n")+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestFigures(t *testing.T) {
	stages := []string{"enc.0", "enc.1", "mid", "dec.1", "dec.0"}
	full := readSynthetic(t, 2000, stages, true)
	modeE := readSynthetic(t, 2000, stages, false)
	fno := readSynthetic(t, 1000, nil, false)
	lossOnly := &Series{Path: "old.jsonl", Train: full.Train}
	// A flat-additive run that records only angles.
	angleOnly := &Series{Path: "additive.jsonl", Angles: full.Angles}

	type png struct {
		name string
		w, h int
	}
	bands := png{BandsFile, 4 * 750, 600}
	loss := png{LossFile, 2 * 750, 60 + 2*540}
	tests := []struct {
		name    string
		runs    []Run
		want    []png
		wantErr string
	}{
		{name: "Full against mode E", runs: []Run{{"Full", full}, {"mode E", modeE}}, want: []png{
			bands,
			{"dynamics-contrast-full.png", 3 * 675, 60 + 2*540},
			{"dynamics-contrast-mode-e.png", 3 * 675, 60 + 2*540},
			{AngleFile, 675, 600},
			{RhoFile, 2 * 750, 600},
			loss,
		}},
		{name: "FNO: bands and loss only", runs: []Run{{"FNO", fno}}, want: []png{bands, loss}},
		{name: "an old log: loss only", runs: []Run{{"old", lossOnly}}, want: []png{loss}},
		{name: "angles only", runs: []Run{{"additive", angleOnly}, {"U-HNO (Full)", full}}, want: []png{
			bands, {"dynamics-contrast-u-hno-full.png", 3 * 675, 60 + 2*540}, {AngleFile, 2 * 675, 600}, {RhoFile, 750, 600}, loss}},
		{name: "labels that clash as file names", runs: []Run{{"Full!", full}, {"full?", full}}, want: []png{
			bands, {"dynamics-contrast-full.png", 3 * 675, 60 + 2*540}, {"dynamics-contrast-full-2.png", 3 * 675, 60 + 2*540},
			{AngleFile, 2 * 675, 600}, {RhoFile, 2 * 750, 600}, loss}},
		{name: "no runs", wantErr: "dynamics: no runs to draw"},
		{name: "no label", runs: []Run{{"", full}}, wantErr: "dynamics: run 0 has no label"},
		{name: "same label", runs: []Run{{"a", full}, {"a", fno}}, wantErr: `dynamics: two runs labelled "a"`},
		{name: "no series", runs: []Run{{"a", nil}}, wantErr: `dynamics: run "a" has no series`},
		{name: "nothing to draw", runs: []Run{{"a", &Series{Path: "x.jsonl", Val: full.Val}}}, wantErr: `dynamics: run "a" (x.jsonl): no training, dynamics or angle records to draw`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "figures")
			got, err := Figures(dir, tt.runs)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got %v, want %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range got {
				if filepath.Dir(p) != dir {
					t.Errorf("%s is not in %s", p, dir)
				}
				names = append(names, filepath.Base(p))
			}
			var want []string
			for _, w := range tt.want {
				want = append(want, w.name)
			}
			if !slices.Equal(names, want) {
				t.Fatalf("figures %v, want %v", names, want)
			}
			for _, w := range tt.want {
				testutil.CheckPNG(t, filepath.Join(dir, w.name), w.w, w.h)
			}
			entries, _ := os.ReadDir(dir)
			if len(entries) != len(want) {
				t.Errorf("%d entries in %s, want %d (no temporary files)", len(entries), dir, len(want))
			}
		})
	}
}

// TestLossPanelsCBC checks the CBC panel: a run whose CBC term is 0 at
// every record (a baseline) has no line there and is named in its title,
// and without any CBC term the panel is left out.
func TestLossPanelsCBC(t *testing.T) {
	full := readSynthetic(t, 200, nil, false)
	fno := &Series{Path: "fno.jsonl", Train: slices.Clone(full.Train)}
	for k := range fno.Train {
		fno.Train[k].CBC = 0
	}
	tests := []struct {
		name     string
		runs     []Run
		titles   []string
		cbcLines int // named lines in the CBC panel
	}{
		{"U-HNO and FNO", []Run{{"Full", full}, {"FNO", fno}}, []string{"total loss", "MSE", "H1 term", "CBC term (none in FNO)"}, 1},
		{"U-HNO alone", []Run{{"Full", full}}, []string{"total loss", "MSE", "H1 term", "CBC term"}, 1},
		{"FNO alone", []Run{{"FNO", fno}}, []string{"total loss", "MSE", "H1 term"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			panels := lossPanels(tt.runs)
			var titles []string
			for _, p := range panels {
				titles = append(titles, p.Title)
			}
			if !slices.Equal(titles, tt.titles) {
				t.Fatalf("panels %q, want %q", titles, tt.titles)
			}
			for j, p := range panels {
				named := 0
				for _, l := range p.Lines {
					if l.Name != "" {
						named++
					}
				}
				want := len(tt.runs)
				if j == 3 {
					want = tt.cbcLines
				}
				if named != want {
					t.Errorf("panel %q: %d named lines, want %d", p.Title, named, want)
				}
			}
		})
	}
}
