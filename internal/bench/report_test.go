package bench

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// sample is a Result with round numbers.
func sample(name string, params int, fwd int64, trainMS, inferMS float64) Result {
	return Result{Name: name, Task: "ns2d", Input: []int{16, 10, 128, 128}, Batch: 16, Params: params,
		FLOPs:       FLOPs{Inference: fwd, ForwardPerSample: float64(fwd) / 16, TrainPerSample: 2.5e9},
		Train:       Timing{MinMS: trainMS - 1, MedianMS: trainMS, MedianPerSampleMS: trainMS / 16},
		Infer:       Timing{MinMS: inferMS - 1, MedianMS: inferMS, MedianPerSampleMS: inferMS / 16},
		TrainGFLOPS: 12.5, InferGFLOPS: 20, Memory: Memory{PeakBytes: 512 << 20, Source: "VmHWM"}}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, []Result{sample("uhno C0=10", 618700, 16*811500000, 46, 40)}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("table %q: want a header, a rule and one row", b.String())
	}
	want := "| uhno C0=10 | 16x10x128x128 | 618.7k | 0.8115 | 2.500 | 45.00 / 46.00 | 2.875 | 39.00 / 40.00 | 2.500 | 12.50 / 20.00 | 512 MiB (VmHWM) |"
	if lines[2] != want {
		t.Fatalf("row\n%s\nwant\n%s", lines[2], want)
	}
}

func TestOverhead(t *testing.T) {
	full := sample("uhno", 618700, 16*811500000, 46, 40)
	f := sample("uhno-F", 618245, 16*810582500, 40, 35)
	o := NewOverhead(full, f)
	if o.Variant != "uhno" || o.Baseline != "uhno-F" || o.Task != "ns2d" ||
		math.Abs(o.Train-1.15) > 1e-12 || math.Abs(o.Infer-40.0/35) > 1e-12 || math.Abs(o.FLOPs-811500000.0/810582500) > 1e-12 {
		t.Fatalf("overhead %+v", o)
	}
	var b bytes.Buffer
	if err := WriteOverheads(&b, []Overhead{o}); err != nil {
		t.Fatal(err)
	}
	// The paper's Delta row: (Full - F) / Full = 0.07% of the parameters, 0.11% of the FLOPs, 13% of the time.
	for _, s := range []string{"| ns2d | uhno / uhno-F |", "1.0007x (+0.07%)", "1.0011x (+0.11%)", "1.1500x (+13.04%)", "1.1429x (+12.50%)"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("overhead table %q lacks %q", b.String(), s)
		}
	}
}

func TestSig(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{0.81153, "0.8115"},
		{12.3456, "12.35"},
		{1234.4, "1234"},
		{98765, "98765"},
		{0.0004567, "0.0004567"},
		{0, "0"},
	}
	for _, tt := range tests {
		if got := sig(tt.v); got != tt.want {
			t.Errorf("sig(%g) = %s, want %s", tt.v, got, tt.want)
		}
	}
}
