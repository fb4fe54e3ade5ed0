package cuda

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// The committed PTX (internal/cuda/ptx, embedded by driver_cuda.go) is
// generated from kernels/*.cu by `make kernels`, which needs nvcc. A kernel
// added to a .cu file without regenerating its PTX builds and passes every
// emulator test (the emulator compiles the .cu sources) and then fails on a
// GPU with "no such kernel is loaded". TestPTXMatchesKernels catches that
// without nvcc or a GPU: every kernels/X.cu must have ptx/X.ptx, and the
// __global__ functions of X.cu must be exactly the .entry names of X.ptx.
// The kernels are extern "C", so a kernel left outside an extern "C" block
// (a mangled .entry name) fails too.

var (
	cuComments = regexp.MustCompile(`(?s)//[^\n]*|/\*.*?\*/`)
	cuGlobal   = regexp.MustCompile(`__global__\s+void\s+([A-Za-z_]\w*)\s*\(`)
	ptxEntry   = regexp.MustCompile(`(?m)^\s*(?:\.visible\s+|\.weak\s+)?\.entry\s+([A-Za-z_$][\w$]*)\s*\(`)
)

// sortedMatches returns the first submatch of every match of re in src, sorted.
func sortedMatches(re *regexp.Regexp, src string) []string {
	var names []string
	for _, m := range re.FindAllStringSubmatch(src, -1) {
		names = append(names, m[1])
	}
	sort.Strings(names)
	return names
}

func TestPTXMatchesKernels(t *testing.T) {
	cus, err := filepath.Glob(filepath.Join("..", "..", "kernels", "*.cu"))
	if err != nil || len(cus) == 0 {
		t.Fatalf("no kernels/*.cu found (%v)", err)
	}
	seen := map[string]bool{}
	for _, cu := range cus {
		base := strings.TrimSuffix(filepath.Base(cu), ".cu")
		seen[base+".ptx"] = true
		src, err := os.ReadFile(cu)
		if err != nil {
			t.Fatal(err)
		}
		want := sortedMatches(cuGlobal, cuComments.ReplaceAllString(string(src), ""))
		ptx, err := os.ReadFile(filepath.Join("ptx", base+".ptx"))
		if err != nil {
			t.Errorf("%s has no committed PTX (run make kernels): %v", cu, err)
			continue
		}
		got := sortedMatches(ptxEntry, string(ptx))
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("ptx/%s.ptx is stale (run make kernels):\n  kernels/%s.cu: %v\n  ptx/%s.ptx:    %v",
				base, base, want, base, got)
		}
	}
	ptxs, _ := filepath.Glob(filepath.Join("ptx", "*.ptx"))
	for _, p := range ptxs {
		if !seen[filepath.Base(p)] {
			t.Errorf("%s has no kernels/*.cu source (make kernels would not regenerate it)", p)
		}
	}
}
