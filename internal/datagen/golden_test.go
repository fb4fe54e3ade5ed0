package datagen

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"testing"

	"uhno/internal/data/pde"
	"uhno/internal/testutil"
)

// goldenGenerators holds, per built-in task, the SHA-256 of what its
// solver produces from its embedded configuration: trajectory 3 of seed
// 0 (every dataset's float32 bits), the datasets' names and shapes, the
// attributes and the coordinates. They were taken from the solvers as
// they stood before issue 38 put them on one base with a registration
// (commit 0c21ea6's code), so that a refactor of the solvers shows it
// changed no bit of any task's data, attribute or coordinate. A solver
// change that is meant to change the data updates its digest here and
// says why in the commit (data files carry a content stamp of their own,
// internal/data/stamp.go). UHNO_PRINT_GOLDEN=1 prints the digests.
var goldenGenerators = map[string]string{
	"burgers":       "70e18146274f1269c12646725e7895ead37472fdb4bae15e9b8f8e06fc1a5aaa",
	"ks":            "d320a4a925d0b3d2a0e4beb76bd527b1d4f9502a94fe900a28031a7c83d2d253",
	"kdv":           "8364314eb1e6d7832b45de6b56022a025b925b69addaf9ddfb98c02c95b03527",
	"adv2d":         "b32a90d5aa810006bb6f0bb9000b5967d83b95cc9b2199cfbc1f6bdf315a6c04",
	"ac2d":          "d522ff819d1c5bdcdc1c914d85ebeaa778f0f2cc6883260663f2bf119a808f40",
	"ns2d":          "64220938020e108df47d05a891193b91c715fb2b52ed767e20a49900ee9fc0af",
	"darcy":         "282cf402394b2e1623d221b1315fbfce79af0c25a1ed0a9c6b3d3cfda3f2be99",
	"burgers-paper": "0705b34c5d43a748e337eb5d28e0287a788f46124a81ebf9346a1688d3cc992a",
	"burgers-shock": "3db70458bc5a9882d9e28da9ed2908c224d1c16d323d6d9c319d3881440296c0",
}

func TestGeneratorGolden(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the digests were taken on amd64 (float64 arithmetic without fused multiply-adds)")
	}
	if testutil.Race {
		// The solvers are serial and called here without datagen's
		// workers (their races are TestGenerate*'s): nothing for the
		// race detector to watch, 95 s of its instrumented arithmetic.
		t.Skip("serial solver code: checked by the plain pass (D-ci-time)")
	}
	// The tasks that had solvers when the digests were taken; a task added
	// since is checked by its own solver's tests (DESIGN, "Adding a task").
	for _, task := range slices.Sorted(maps.Keys(goldenGenerators)) {
		t.Run(task, func(t *testing.T) {
			gen, err := Generator(builtin(t, task, nil))
			if err != nil {
				t.Fatal(err)
			}
			got, err := generatorDigest(gen, 0, 3)
			if err != nil {
				t.Fatal(err)
			}
			if os.Getenv("UHNO_PRINT_GOLDEN") != "" {
				fmt.Printf("\t%q: %q,\n", task, got)
				return
			}
			if want := goldenGenerators[task]; got != want {
				t.Errorf("digest %s, want %s: the solver's data, attributes or coordinates changed", got, want)
			}
		})
	}
}

// generatorDigest hashes trajectory i of seed with gen's datasets,
// shapes, attributes (sorted by name, printed with %v) and coordinates
// (sorted by name, float32 bits).
func generatorDigest(gen pde.Generator, seed uint64, i int) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "datasets %v shapes %v\n", gen.Datasets(), gen.Shapes())
	var dst [][]float32
	for _, s := range gen.Shapes() {
		n := 1
		for _, d := range s {
			n *= d
		}
		dst = append(dst, make([]float32, n))
	}
	if err := gen.Generate(seed, i, dst); err != nil {
		return "", err
	}
	bits := func(v []float32) {
		buf := make([]byte, 4*len(v))
		for j, x := range v {
			binary.LittleEndian.PutUint32(buf[4*j:], math.Float32bits(x))
		}
		h.Write(buf)
	}
	for _, d := range dst {
		bits(d)
	}
	attrs := gen.Attrs()
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		fmt.Fprintf(h, "attr %s %T %v\n", k, attrs[k], attrs[k])
	}
	coords := gen.Coords()
	for _, k := range slices.Sorted(maps.Keys(coords)) {
		fmt.Fprintf(h, "coord %s %d\n", k, len(coords[k]))
		bits(coords[k])
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
