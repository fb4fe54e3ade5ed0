package report

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"uhno/internal/atomicfile"
	"uhno/internal/config"
	"uhno/internal/eval"
)

// Options are the inputs of Write.
type Options struct {
	// Inputs are the paths given (--runs and the arguments after it).
	Inputs []string
	// Dir is the output directory; it is created.
	Dir string
	// Version is uhno's version, and Command the command line of this
	// report, both written in its header.
	Version, Command string
	// Notes is Markdown placed after the header's first paragraph (uhno
	// reproduce: its schedule, commit, commands and missing cells).
	Notes string
	// NoFigures writes report.md alone: no PNG, and the paper's figures
	// are listed as not drawn.
	NoFigures bool
}

// Result says what Write did.
type Result struct {
	// Report is the path of report.md, Figures those of the PNGs written.
	Report  string
	Figures []string
	// Used are the recognised inputs, Skipped the paths that were not.
	Used    []Input
	Skipped []Skip
	// Contradictions are the places where ours contradicts the paper, as
	// the report states them, one by one.
	Contradictions []string
	// Summary is the same in short, as the report's summary gives it: one
	// line per table, task and metric whose ranking we reverse in part
	// (how many pairs, how many resolved), then the other statements.
	Summary []string
}

// FiguresDir is the figures' directory inside the output directory.
const FiguresDir = "figures"

// ReportFile is the report's name inside the output directory.
const ReportFile = "report.md"

// Write reads the inputs and writes the report. Errors are one line and
// name the file at fault.
func Write(opts Options) (*Result, error) {
	if len(opts.Inputs) == 0 {
		return nil, fmt.Errorf("report: no inputs; give --runs DIR... (directories of uhno eval, uhno ablate or uhno train, or a bench JSON)")
	}
	in, err := collect(opts.Inputs)
	if err != nil {
		return nil, err
	}
	figDir := filepath.Join(opts.Dir, FiguresDir)
	mk := figDir
	if opts.NoFigures {
		mk = opts.Dir
	}
	if err := os.MkdirAll(mk, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	b := &builder{figDir: figDir, noFigures: opts.NoFigures, names: map[string]int{}, covered: map[string][]string{}}
	b.evalSections(in.evals)
	b.ablationSections(in.ablations)
	if err := b.trainSection(in.trains); err != nil {
		return nil, err
	}
	b.benchSections(in.benches)
	if b.err != nil {
		return nil, b.err
	}

	var doc strings.Builder
	b.header(&doc, opts, in)
	doc.WriteString(b.body.String())
	path := filepath.Join(opts.Dir, ReportFile)
	if err := atomicfile.WriteFile(path, []byte(doc.String()), 0o644); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return &Result{Report: path, Figures: b.figs, Used: in.used, Skipped: in.skipped, Contradictions: b.contradictions.all,
		Summary: b.summary()}, nil
}

// builder accumulates the report's sections.
type builder struct {
	body           strings.Builder
	figDir         string
	noFigures      bool // Options.NoFigures: draw nothing, cover no figure
	figs           []string
	names          map[string]int
	contradictions contradictions
	ranks          []rankGroup         // the ranking checks at the paper's horizon
	covered        map[string][]string // paper item -> what rebuilt it
	err            error               // the first figure error
}

func (b *builder) printf(format string, args ...any) { fmt.Fprintf(&b.body, format, args...) }

// contradict records and returns a statement of where ours contradicts
// the paper.
func (b *builder) contradict(where, what string) string {
	b.summarise(where, what)
	return b.contradictDetail(where, what)
}

// contradictDetail records and returns a statement of contradiction that
// the summary holds in short, not word for word: a pair of models that
// ours orders the other way from the paper (counted per ranking group,
// builder.ranks), or one metric in which an ablation mode beats Full
// (summarised per mode).
func (b *builder) contradictDetail(where, what string) string {
	b.contradictions.all = append(b.contradictions.all, where+": "+what)
	return "**Contradicts the paper:** " + what
}

// summarise adds a line to the summary's list of claims.
func (b *builder) summarise(where, what string) {
	b.contradictions.claims = append(b.contradictions.claims, where+": "+what)
}

// contradictions are the statements of contradiction: all of them, as
// each section states them, and the claims the summary lists (a mode
// beating Full, summed up per mode; a most damaging change; a cost ratio;
// a crash rate), the ranking reversals being summed up per group instead.
type contradictions struct{ all, claims []string }

// summary is Result.Summary: per ranking group with a reversal, one line;
// then the claims.
func (b *builder) summary() []string {
	var out []string
	for _, g := range b.ranks {
		if g.reversed == 0 {
			continue
		}
		line := fmt.Sprintf("%s, %s, %s: %d of %d ranked pairs reversed, %d resolved at 95%%", g.item, g.task, g.metric, g.reversed, g.pairs, len(g.resolved))
		if len(g.resolved) > 0 {
			line += " (" + strings.Join(g.resolved, "; ") + ")"
		}
		line += "; intervals over " + g.scope()
		out = append(out, line)
	}
	return append(out, b.contradictions.claims...)
}

func (b *builder) cover(item, by string) {
	if b.noFigures && strings.HasPrefix(item, "Fig.") {
		return
	}
	if !slices.Contains(b.covered[item], by) {
		b.covered[item] = append(b.covered[item], by)
	}
}

// figure returns a fresh path for a figure named name (.png), and its
// path relative to the report.
func (b *builder) figure(name string) (path, rel string) {
	name = fileName(name)
	if b.names[name]++; b.names[name] > 1 {
		name = fmt.Sprintf("%s-%d", name, b.names[name])
	}
	return filepath.Join(b.figDir, name+".png"), FiguresDir + "/" + name + ".png"
}

// wrote records a figure written, or the first error.
func (b *builder) wrote(path, rel, caption string, err error) {
	if err != nil {
		if b.err == nil {
			b.err = fmt.Errorf("report: %w", err)
		}
		return
	}
	b.figs = append(b.figs, path)
	b.printf("![%s](%s)\n\n*%s*\n\n", caption, rel, caption)
}

// paperItems are the paper's tables and figures the report can rebuild,
// with what to run to get the input each needs.
var paperItems = []struct{ item, how string }{
	{"Tab. main-acc", "`uhno eval` of a task (results.json), e.g. `uhno eval --checkpoint runs/burgers-uhno --checkpoint runs/burgers-fno`"},
	{"Tab. main-acc-h1", "as Tab. main-acc"},
	{"Tab. stability", "`uhno eval --horizon-mult 4` of burgers, ns2d or cfd3d"},
	{"Tab. spectral", "`uhno eval` of burgers or ns2d"},
	{"Tab. fno-wider", "`uhno eval` of burgers or cfd3d holding U-HNO and FNO (and a wider FNO: `uhno train --model fno --width 56`)"},
	{"Tab. burgers-ablation", "`uhno ablate --task burgers --modes A-I` (ablation.json)"},
	{"Tab. ablation-extra", "`uhno ablate --modes A-I` of burgers, ns2d or cfd3d"},
	{"Tab. ablation-extra-h1", "as Tab. ablation-extra"},
	{"Fig. burgers-ablation-bars", "as Tab. burgers-ablation"},
	{"Fig. training-dynamics", "runs of `uhno train` (log.jsonl; a Full and a mode-E run for panel (e)) and `uhno ablate --sweep spar.rho0=0.1,0.2,0.3,0.4,0.5,0.6,0.7` for panel (f)"},
	{"Tab. cost", "`uhno bench --preset cost-ns2d --params 0.62M --json cost.json`"},
	{"Tab. cost-spar", "`uhno bench --preset cost-spar --params 0.62M --json cost-spar.json`"},
}

// header writes the title, the inputs, what is rebuilt and the
// contradictions.
func (b *builder) header(w *strings.Builder, opts Options, in *inputs) {
	w.WriteString("# U-HNO: our results beside the paper's\n\n")
	fmt.Fprintf(w, "Written by `uhno report` (uhno %s)", cmp.Or(opts.Version, "unknown version"))
	if opts.Command != "" {
		fmt.Fprintf(w, ": `%s`", opts.Command)
	}
	w.WriteString(".\n\n")
	if opts.Notes != "" {
		w.WriteString(strings.TrimRight(opts.Notes, "\n") + "\n\n")
	}
	w.WriteString("Our values print as `mean [low, high]`: 95% percentile bootstrap intervals over test trajectories " +
		"(Wilson intervals for crash rates; for timings the median with [min, max] over the timed repeats). " +
		"The paper's print as in the paper, with its intervals where it gives them. " +
		"\"ours / paper\" is the ratio of the means; lower is better for every metric.\n\n")

	w.WriteString("## Inputs\n\n")
	if len(in.used) == 0 {
		w.WriteString("No input was recognised.\n\n")
	} else {
		w.WriteString("| input | recognised as | file read |\n|---|---|---|\n")
		for _, u := range in.used {
			fmt.Fprintf(w, "| `%s` | %s | `%s` |\n", u.Path, u.Kind, u.File)
		}
		w.WriteString("\n")
	}
	if len(in.skipped) > 0 {
		w.WriteString("Skipped:\n\n")
		for _, s := range in.skipped {
			fmt.Fprintf(w, "- `%s`: %s\n", s.Path, s.Why)
		}
		w.WriteString("\n")
	}

	w.WriteString("## What was rebuilt\n\n| paper | rebuilt from | to rebuild it, give |\n|---|---|---|\n")
	for _, it := range paperItems {
		by := b.covered[it.item]
		if len(by) == 0 && opts.NoFigures && strings.HasPrefix(it.item, "Fig.") {
			fmt.Fprintf(w, "| %s | not drawn (--no-figures) | the same inputs without --no-figures |\n", it.item)
			continue
		}
		if len(by) == 0 {
			fmt.Fprintf(w, "| %s | not rebuilt | %s |\n", it.item, it.how)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | |\n", it.item, strings.Join(by, "; "))
	}
	w.WriteString("\n## Where ours contradicts the paper\n\n")
	if len(b.contradictions.all) == 0 {
		w.WriteString("Nothing in these inputs contradicts a ranking or claim of the paper (the sections below compare the values).\n\n")
	}
	if len(b.ranks) > 0 {
		w.WriteString("Rankings, per table, task and metric: of the pairs of models the paper orders, how many ours orders the other way, " +
			"and how many of those reversals our 95% intervals resolve (the rest are within our noise). " +
			"Kendall's tau compares the two orders over the pairs (1: the paper's order; -1: its reverse). " +
			"Each reversal is stated in its table's section below; only evaluations at the paper's horizon for the table count. " +
			"\"Intervals over\" says what resolves: the test trajectories of one training run per model hold no training variance " +
			"(on AC-2D, NS-2D and shock-forming Burgers one run's interval was a fifth to a tenth of the spread between training seeds: docs/RESULTS.md), " +
			"a merge over training seeds (`uhno reproduce --seeds`) does.\n\n")
		w.WriteString("| table | task | metric | pairs | reversed | resolved | Kendall's tau | resolved reversals: ours ahead (by) | intervals over |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, g := range b.ranks {
			fmt.Fprintf(w, "| %s | %s | %s | %d | %d | %d | %.2f | %s | %s |\n", g.item, g.task, g.metric, g.pairs, g.reversed, len(g.resolved),
				g.kendall(), cmp.Or(strings.Join(g.resolved, "; "), "—"), g.scope())
		}
		w.WriteString("\n")
	}
	if len(b.contradictions.claims) > 0 {
		if len(b.ranks) > 0 {
			w.WriteString("Other claims of the paper that ours contradicts:\n\n")
		}
		for _, c := range b.contradictions.claims {
			fmt.Fprintf(w, "- %s\n", c)
		}
		w.WriteString("\n")
	}
}

// ---- formatting

// ours formats one of our values with its interval.
func ours(iv eval.Interval) string { return eval.FormatInterval(iv) }

// paperNum formats a number of the paper as it is printed there (up to
// its last significant digit).
func paperNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// paperCell formats a value of the paper, with its interval when it has
// one.
func paperCell(v Value, ok bool) string {
	if !ok {
		return "—"
	}
	if !v.CI {
		return paperNum(v.Mean)
	}
	return fmt.Sprintf("%s [%s, %s]", paperNum(v.Mean), paperNum(v.Low), paperNum(v.High))
}

// ratio formats a / b as "1.23x".
func ratio(a, b float64) string {
	r := a / b
	switch {
	case b == 0 || math.IsNaN(r) || math.IsInf(r, 0):
		return "n/a"
	case r >= 100:
		return fmt.Sprintf("%.0fx", r)
	case r >= 10:
		return fmt.Sprintf("%.1fx", r)
	case r >= 0.01:
		return fmt.Sprintf("%.2fx", r)
	}
	return fmt.Sprintf("%.2gx", r)
}

// num formats one of our plain numbers as FormatInterval formats a mean.
func num(x float64) string {
	s := eval.FormatInterval(eval.Interval{Mean: x, Low: x, High: x})
	if i := strings.Index(s, " ["); i >= 0 {
		return s[:i]
	}
	return s
}

// inside says whether the paper's mean lies in our interval.
func inside(iv eval.Interval, p Value) bool { return p.Mean >= iv.Low && p.Mean <= iv.High }

// disjoint says whether two of our intervals do not overlap.
func disjoint(a, b eval.Interval) bool { return a.High < b.Low || b.High < a.Low }

// fileName turns a label into a file name part.
func fileName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.', r == '_':
			return r
		}
		return '_'
	}, s)
}

// taskTitle is a task's title in the paper's words ("1D Burgers").
func taskTitle(task string) string {
	if s, err := config.LookupTask(task); err == nil {
		return s.Title
	}
	return task
}

// taskOrder sorts by the paper's task order.
func taskOrder(task string) int {
	if i := slices.Index(config.TaskNames(), task); i >= 0 {
		return i
	}
	return len(config.TaskNames())
}

// code quotes s as Markdown code.
func code(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" }
