package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"uhno/internal/bench"
	"uhno/internal/eval"
	"uhno/internal/model"
)

// paperShape says whether a bench row has the shape of Tab. cost: NS-2D,
// 128x128, batch 16.
func paperShape(r bench.Result) bool {
	return r.Task == "ns2d" && r.Batch == 16 && len(r.Input) == 4 && r.Input[2] == 128 && r.Input[3] == 128
}

// benchModel is a bench row's model as uhno's registry names it. The
// bench names a row TASK/NAME[ DETAIL] ("ns2d/fno width=16"), and an
// FNO-wider row is an FNO (Model "fno") named TASK/fno-wider, so the name
// tells the two apart; otherwise the row's Model says it.
func benchModel(r bench.Result) string {
	name, _, _ := strings.Cut(r.Name, " ")
	if _, after, ok := strings.Cut(name, "/"); ok && after == "fno-wider" {
		return after
	}
	return r.Model
}

// costKey is the paper's row of a bench row: Tab. cost's row of its
// model (U-HNO, FNO, FNO-wider and the six other baselines), Tab.
// cost-spar's mode F.
func costKey(r bench.Result) (*Table, string) {
	switch m := benchModel(r); m {
	case "uhno":
		return &Cost, KeyUHNO
	case "fno":
		return &Cost, KeyFNO
	case "fno-wider":
		return &Cost, KeyFNOWider
	case "uhno-" + model.ModeNoSPAR:
		return &CostSPAR, model.ModeNoSPAR
	default:
		if k := model.PaperName(m); k != "" {
			return &Cost, k
		}
	}
	return nil, ""
}

// timing is a per-sample timing as median [min, max] over the repeats.
func timing(t bench.Timing, batch int) eval.Interval {
	iv := eval.Interval{Mean: t.MedianPerSampleMS, Low: t.MinPerSampleMS, High: t.MedianPerSampleMS, N: len(t.SamplesMS)}
	if batch > 0 {
		for _, s := range t.SamplesMS {
			iv.High = max(iv.High, s/float64(batch))
		}
	}
	return iv
}

// benchSections writes Tab. cost and Tab. cost-spar from bench reports.
func (b *builder) benchSections(benches []benchInput) {
	if len(benches) == 0 {
		return
	}
	b.printf("## Compute (Tab. cost, Tab. cost-spar)\n\n")
	for _, in := range benches {
		b.benchCost(in)
		if len(in.rep.Overheads) > 0 {
			b.benchSPAR(in)
		}
	}
}

// benchSource writes where a bench report comes from and the machine.
func (b *builder) benchSource(in benchInput) {
	rep := in.rep
	h := rep.Host
	var backends []string
	repeats, warmup := 0, 0
	for _, r := range rep.Results {
		if !slices.Contains(backends, r.Backend) {
			backends = append(backends, r.Backend)
		}
		repeats, warmup = r.Repeats, r.Warmup
	}
	args := []string{"uhno", "bench"}
	if rep.Preset != "" {
		args = append(args, "--preset", rep.Preset)
	}
	args = append(args, "--repeats", fmt.Sprint(repeats), "--warmup", fmt.Sprint(warmup), "--threads", fmt.Sprint(rep.Threads), "--json", in.file)
	b.printf("Source: %s (uhno bench, uhno %s, preset %s). Machine: %s, %d CPUs, %s/%s, %s, %d threads, backend %s; the paper's is an A100 GPU. "+
		"Command: not recorded in the JSON; reconstructed from it (the --params budget is not recorded; the parameter counts are): %s.\n\n",
		code(in.file), cmp.Or(rep.Version, "version not recorded"), cmp.Or(rep.Preset, "none"), cmp.Or(h.CPU, "CPU model not recorded"),
		h.CPUs, h.OS, h.Arch, h.Go, rep.Threads, strings.Join(backends, ", "), code(shellJoin(args)))
}

// benchCost writes Tab. cost: every row beside the paper's row of the
// same model at the paper's shape.
func (b *builder) benchCost(in benchInput) {
	rep := in.rep
	b.printf("### Tab. cost: %s\n\n", code(in.file))
	b.benchSource(in)
	b.printf("| row (ours) | task | input | paper row | params (M), ours | paper | fwd GFLOP/sample, ours | paper | " +
		"train ms/sample, ours | paper | infer ms/sample, ours | paper | peak memory (GB), ours | peak VRAM (GB), paper |\n")
	b.printf("|%s\n", strings.Repeat("---|", 14))
	type cols struct{ params, flops, train, infer, mem float64 }
	oursBy := map[string]cols{}
	any := false
	for _, r := range rep.Results {
		tab, key := costKey(r)
		if !paperShape(r) {
			tab, key = nil, ""
		}
		get := func(col string) string {
			if tab == nil {
				return "—"
			}
			v, ok := tab.Get(key, col)
			return paperCell(v, ok)
		}
		mem := "n/a"
		if r.Memory.PeakBytes > 0 {
			mem = fmt.Sprintf("%s (%s)", num(float64(r.Memory.PeakBytes)/1e9), r.Memory.Source)
		}
		tr, inf := timing(r.Train, r.Batch), timing(r.Infer, r.Batch)
		b.printf("| %s | %s | %v | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.Name, r.Task, r.Input, cmp.Or(key, "—"),
			num(float64(r.Params)/1e6), get(ColParams), num(r.FLOPs.ForwardPerSample/1e9), get(ColGFLOPs),
			ours(tr), get(ColTrain), ours(inf), get(ColInfer), mem, get(ColMemory))
		if key != "" {
			any = true
		}
		if m := benchModel(r); m == "uhno" || m == "fno" {
			k := r.Task + fmt.Sprint(r.Input) + "/" + m
			if _, seen := oursBy[k]; !seen {
				oursBy[k] = cols{float64(r.Params), r.FLOPs.ForwardPerSample, tr.Mean, inf.Mean, float64(r.Memory.PeakBytes)}
			}
		}
	}
	b.printf("\n")
	notes := []string{"Timings are per sample (the step's time over the batch), median [min, max] over the timed repeats; the paper's are per sample, averaged over 1,000 steps on an A100. " +
		"Peak memory is what the backend reports (the process's resident set on the CPU), not comparable with the paper's GPU VRAM."}
	if !any {
		notes = append(notes, "No row has the paper's shape (NS-2D, 128x128, batch 16: `uhno bench --preset cost-ns2d`), so no paper values sit beside ours.")
	}
	// U-HNO over FNO at each shape that has both.
	var shapes []string
	for k := range oursBy {
		if s, ok := strings.CutSuffix(k, "/uhno"); ok {
			if _, ok := oursBy[s+"/fno"]; ok {
				shapes = append(shapes, s)
			}
		}
	}
	slices.Sort(shapes)
	for _, s := range shapes {
		u, f := oursBy[s+"/uhno"], oursBy[s+"/fno"]
		atPaper := strings.HasPrefix(s, "ns2d[16 ") && strings.HasSuffix(s, " 128 128]")
		var parts []string
		where := fmt.Sprintf("Tab. cost (%s)", in.file)
		for _, c := range []struct {
			name, col string
			u, f      float64
		}{{"params", ColParams, u.params, f.params}, {"FLOPs", ColGFLOPs, u.flops, f.flops}, {"train time", ColTrain, u.train, f.train},
			{"inference time", ColInfer, u.infer, f.infer}, {"memory", ColMemory, u.mem, f.mem}} {
			pu, _ := Cost.Get(KeyUHNO, c.col)
			pf, _ := Cost.Get(KeyFNO, c.col)
			if c.f == 0 {
				continue
			}
			ro, rp := c.u/c.f, pu.Mean/pf.Mean
			parts = append(parts, fmt.Sprintf("%s ours %s (paper %s)", c.name, ratio(c.u, c.f), ratio(pu.Mean, pf.Mean)))
			if atPaper && c.col != ColParams && c.col != ColMemory && (ro-1)*(rp-1) < 0 {
				notes = append(notes, b.contradict(where, fmt.Sprintf("at the paper's shape U-HNO costs %s FNO's %s in the paper; ours %s.",
					ratio(pu.Mean, pf.Mean), c.name, ratio(c.u, c.f))))
			}
		}
		prefix := "U-HNO / FNO at " + s
		if !atPaper {
			prefix += " (not the paper's shape; the paper's ratios are at NS-2D 128x128, batch 16)"
		}
		notes = append(notes, prefix+": "+strings.Join(parts, ", ")+".")
	}
	for _, n := range notes {
		b.printf("- %s\n", n)
	}
	b.printf("\n")
	if any {
		b.cover("Tab. cost", fmt.Sprintf("%s (%s)", code(in.file), cmp.Or(rep.Host.CPU, "CPU")))
	} else {
		b.cover("Tab. cost", fmt.Sprintf("%s (ours only: not the paper's shape)", code(in.file)))
	}
}

// benchSPAR writes Tab. cost-spar from the overheads of a cost-spar
// bench: Full over mode F, as the paper's Delta row in percent of Full.
func (b *builder) benchSPAR(in benchInput) {
	b.printf("### Tab. cost-spar: %s\n\n", code(in.file))
	b.benchSource(in)
	b.printf("Δ is (Full − F) / Full in percent, the paper's \"Δ (%% of Full)\" row; the paper's are on NS-2D (128x128, batch 16).\n\n")
	b.printf("| task | variant / baseline | params Δ, ours | paper | FLOPs Δ, ours | paper | train Δ, ours | paper | infer Δ, ours | paper |\n|%s\n", strings.Repeat("---|", 10))
	where := fmt.Sprintf("Tab. cost-spar (%s)", in.file)
	var notes []string
	for _, o := range in.rep.Overheads {
		cells := []string{o.Task, o.Variant + " / " + o.Baseline}
		for _, c := range []struct {
			name, col string
			r         float64
		}{{"params", ColParams, o.Params}, {"FLOPs", ColGFLOPs, o.FLOPs}, {"training time", ColTrain, o.Train}, {"inference time", ColInfer, o.Infer}} {
			d := math.NaN()
			if c.r != 0 && !math.IsNaN(c.r) {
				d = 100 * (1 - 1/c.r)
			}
			p, ok := CostSPAR.Get("delta_pct", c.col)
			ok = ok && o.Task == "ns2d"
			cells = append(cells, pct(d), map[bool]string{true: pct(p.Mean), false: "—"}[ok])
			if ok && !math.IsNaN(d) && d*p.Mean < 0 && c.col != ColParams {
				notes = append(notes, b.contradict(where, fmt.Sprintf("on %s SPAR adds %s %s over mode F in the paper; ours %s (SPAR cheaper than additive fusion).",
					o.Task, pct(p.Mean), c.name, pct(d))))
			}
		}
		b.printf("| %s |\n", strings.Join(cells, " | "))
	}
	b.printf("\n")
	for _, n := range notes {
		b.printf("- %s\n", n)
	}
	if len(notes) > 0 {
		b.printf("\n")
	}
	b.cover("Tab. cost-spar", code(in.file))
}

// pct formats a percentage with its sign.
func pct(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%+.2f%%", x)
}
