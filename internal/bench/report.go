package bench

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"uhno/internal/model"
	"uhno/internal/tensor"
)

// ReportFormat versions Report.
const ReportFormat = "uhno-bench/1"

// Report is the JSON document of `uhno bench --json`: the host, the
// measured rows and the overheads of a preset. Its writer (cmd/uhno) and
// its reader (internal/report) share this type, so the format is defined
// once; fields added later decode as zero values from older files.
type Report struct {
	Format    string     `json:"format"`
	Version   string     `json:"version"`
	Preset    string     `json:"preset,omitempty"`
	Host      Host       `json:"host"`
	Threads   int        `json:"threads"`
	FFTFLOPs  string     `json:"fft_flops_convention"`
	Results   []Result   `json:"results"`
	Overheads []Overhead `json:"overheads,omitempty"`
}

// Overhead compares a variant with its baseline at the same shape: Table
// cost-spar puts Full U-HNO (SPAR routing) over mode F (additive fusion).
// Each field is variant / baseline.
type Overhead struct {
	Task     string  `json:"task,omitempty"`
	Variant  string  `json:"variant"`
	Baseline string  `json:"baseline"`
	Params   float64 `json:"params_ratio"`
	FLOPs    float64 `json:"forward_flops_ratio"`
	Train    float64 `json:"train_median_ratio"`
	Infer    float64 `json:"infer_median_ratio"`
}

// NewOverhead compares variant with baseline (parameters, forward FLOPs
// per sample, median training and inference times). A ratio over a zero
// baseline is 0 (printed "n/a").
func NewOverhead(variant, baseline Result) Overhead {
	ratio := func(v, b float64) float64 {
		if b == 0 {
			return 0
		}
		return v / b
	}
	return Overhead{Task: variant.Task, Variant: variant.Name, Baseline: baseline.Name,
		Params: ratio(float64(variant.Params), float64(baseline.Params)),
		FLOPs:  ratio(float64(variant.FLOPs.Inference), float64(baseline.FLOPs.Inference)),
		Train:  ratio(variant.Train.MedianMS, baseline.Train.MedianMS),
		Infer:  ratio(variant.Infer.MedianMS, baseline.Infer.MedianMS)}
}

// WriteTable writes one Markdown table row per result: parameters, GFLOPs
// per sample (forward and training step), training and inference
// milliseconds per step (min / median) and per sample (median), achieved
// GFLOP/s at the medians, and the memory high-water mark.
func WriteTable(w io.Writer, rs []Result) error {
	var b strings.Builder
	b.WriteString("| model | input | params | fwd GFLOP/sample | train GFLOP/sample | train ms/step (min / median) | train ms/sample | " +
		"infer ms/step (min / median) | infer ms/sample | GFLOP/s (train / infer) | peak memory |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s / %s | %s | %s / %s | %s | %s / %s | %s |\n",
			r.Name, tensor.ShapeString(r.Input), model.FormatCount(r.Params),
			sig(r.FLOPs.ForwardPerSample/1e9), sig(r.FLOPs.TrainPerSample/1e9),
			sig(r.Train.MinMS), sig(r.Train.MedianMS), sig(r.Train.MedianPerSampleMS),
			sig(r.Infer.MinMS), sig(r.Infer.MedianMS), sig(r.Infer.MedianPerSampleMS),
			sig(r.TrainGFLOPS), sig(r.InferGFLOPS), memory(r.Memory))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteOpTimes writes, for each result timed per operation
// (Options.OpTimes), one Markdown table of a training step's operations by
// time: phase, operation, calls, ms per step, share of the operations'
// summed time, GFLOP/s (FLOPs by flops.go's conventions over the time; "-"
// for operations without FLOPs), GB/s (the least traffic the calls must
// make, counter.go's rd/wr/acc, over the time: a lower bound), and a last
// row with the rest of those steps' wall-clock time (the tape, allocation
// and Go between the calls).
func WriteOpTimes(w io.Writer, rs []Result) error {
	var b strings.Builder
	for _, r := range rs {
		if r.OpSteps == 0 {
			continue
		}
		ops := slices.Clone(r.OpTimes)
		slices.SortStableFunc(ops, func(a, b OpCount) int { return cmp.Compare(b.NS, a.NS) })
		var sum int64
		for _, o := range ops {
			sum += o.NS
		}
		fmt.Fprintf(&b, "\n%s, per operation (mean of %d training steps of %s ms, timed call by call):\n\n", r.Name, r.OpSteps, sig(r.OpStepMS))
		b.WriteString("| phase | operation | calls | ms/step | share | GFLOP/s | GB/s |\n|---|---|---|---|---|---|---|\n")
		var bytes int64
		for _, o := range ops {
			ms := float64(o.NS) / 1e6
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %.1f%% | %s | %s |\n", o.Phase, o.Op, o.Calls, sig(ms), 100*float64(o.NS)/float64(max(sum, 1)),
				perNS(o.FLOPs, o.NS), perNS(o.Bytes, o.NS))
			bytes += o.Bytes
		}
		fmt.Fprintf(&b, "| all | operations | | %s | 100%% | %s | %s |\n", sig(float64(sum)/1e6), perNS(Total(ops), sum), perNS(bytes, sum))
		fmt.Fprintf(&b, "| | rest of the step (tape, allocation, Go between the calls) | | %s | %.1f%% of the step | | |\n",
			sig(r.OpStepMS-float64(sum)/1e6), 100*(1-float64(sum)/1e6/max(r.OpStepMS, 1e-9)))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// perNS is n per nanosecond (giga-n per second) in significant digits, or
// "-" when there is nothing to divide.
func perNS(n, ns int64) string {
	if n <= 0 || ns <= 0 {
		return "-"
	}
	return sig(float64(n) / float64(ns))
}

// WriteOverheads writes one Markdown table row per comparison: each ratio
// variant / baseline and, as the paper's Delta row, the difference in
// percent of the variant.
func WriteOverheads(w io.Writer, ovs []Overhead) error {
	var b strings.Builder
	b.WriteString("| task | variant / baseline | params | FLOPs/sample | train ms (median) | infer ms (median) |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, o := range ovs {
		fmt.Fprintf(&b, "| %s | %s / %s | %s | %s | %s | %s |\n", o.Task, o.Variant, o.Baseline,
			ratioCell(o.Params), ratioCell(o.FLOPs), ratioCell(o.Train), ratioCell(o.Infer))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ratioCell prints a ratio r = v/b as "1.0012x (+0.12%)", the percentage
// being (v - b) / v.
func ratioCell(r float64) string {
	if math.IsNaN(r) || r == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.4fx (%+.2f%%)", r, 100*(1-1/r))
}

// memory prints a high-water mark in MiB with its source.
func memory(m Memory) string {
	if m.PeakBytes <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.0f MiB (%s)", float64(m.PeakBytes)/(1<<20), m.Source)
}

// sig prints v with 4 significant digits and no exponent (0.8115, 12.35,
// 1234).
func sig(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	prec := 3 - int(math.Floor(math.Log10(math.Abs(v))))
	return strconv.FormatFloat(v, 'f', max(prec, 0), 64)
}

// Host describes the machine a benchmark ran on.
type Host struct {
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPU        string `json:"cpu,omitempty"` // /proc/cpuinfo "model name"
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go"`
}

// HostInfo describes this machine.
func HostInfo() Host {
	return Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPU: cpuModel(), CPUs: runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version()}
}

// cpuModel is the first "model name" of /proc/cpuinfo, or "".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
