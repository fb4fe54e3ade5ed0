//go:build cudaemu && !cuda

package cuda

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"uhno/internal/cuda/emu"
)

// afterRun, under the emulator, checks that the suite launched every
// kernel of kernels/*.cu at least once, so a kernel added without a test
// against the CPU backend fails CI. It checks only a whole run (no
// -test.run filter) and prints the launch count.
func afterRun() int {
	var missing []string
	ks := emu.Kernels()
	for _, k := range ks {
		if k.Launches == 0 {
			missing = append(missing, k.Name)
		}
	}
	if f := flag.Lookup("test.run"); f != nil && f.Value.String() != "" {
		return 0
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "cudaemu: %d of %d kernels were never launched by the tests: %s\n",
			len(missing), len(ks), strings.Join(missing, ", "))
		return 1
	}
	fmt.Printf("cudaemu: all %d kernels launched, %d launches\n", len(ks), emu.Launches())
	return 0
}
