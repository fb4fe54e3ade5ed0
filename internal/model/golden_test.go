package model

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/cpu"

	"uhno/internal/tensor"
	"uhno/internal/tensor/gradcheck"
)

// goldenDefault holds, per model, the SHA-256 of the bits of the forward
// output, the branch features and masks, the input's gradient and every
// parameter gradient (runDigest), as the code computed them at the branch
// point of issue 20 (commit 19b54c9, before the four switches existed).
// TestDefaultBitIdentical recomputes them with a default Spec: the
// switches' zero values must leave every bit of the forward and backward
// passes as they were. Regenerate only for a change that is meant to alter
// the default numerics (UHNO_PRINT_GOLDEN=1 prints the table).
//
// The digests are bits, so they hold for the code paths they were taken
// on: amd64 with AVX-512, AVX2 and FMA, where the CPU backend's C kernels
// run their x86-64-v4 clones. Elsewhere the test skips (another clone
// rounds differently, correctly).
var goldenDefault = map[string]string{
	"1D/full":    "40c5932a77668ecd3719fbca9798242b50dca3b5a0cc8d15084efe67d6f28b53",
	"1D/A":       "ecfad931ae6a8c01bbb863dca25485ce8f767dfd2abff8bde76c1665c857476f",
	"1D/B":       "1b55812397667fa5ad487e24dbb1a035fdf478186a5ac94336541d7aabaed591",
	"1D/F":       "a5aec2fd8974cb98d8913a9102ebe7dedf808af5271e2747da0d67b2e64314f0",
	"1D/G":       "1025bffeaceff4d2e620f82c9b3902be80354c0ad8f52197abeebeec89b4f3b5",
	"1D/H":       "0c2f37df72d4222abc62ad899fce62c2dd37242cc9eaf54838b86f8706213027",
	"1D/I":       "184ba7e60a5cd1be45475ae641a287e66a7ba24e5cc601625496e628c077299d",
	"2D/full":    "cf28169b48510b226848abdc38f0aaf495803b999008a3003a90011ffe9538be",
	"2D/F":       "124f62340040957642f358a2b24aec12af20b65567042f369ec74af539ce4734",
	"3D/full":    "a9dda2696c6af2d9a33b00c711db4d18a4c48543bdc9d020fba7ce3d92f6eb25",
	"3D/F":       "953b81728851042e4e7b6a444bb3a4bcd0d7ce78f26f270f8a361e94e10fe8e8",
	"1D/convfno": "1e95d2b84f90056457a10e8ab70058851afeb3a5c1834474e5b04193630bde03",
	"2D/convfno": "96c9bab44845898abc8da7bbf6de8029e3d2eb7c4e00e4d9e3a0bd0516580b9f",
	"3D/convfno": "66e47fee0455642f033791b7862bb7b66db78b04c980bda729200cfd1e8cb3ed",
	// FNO and LogLo-FNO as commit 44cf1b5 computed them, before issue 21
	// made SpectralConv one op with a frequency list and LogLo-FNO an FNO
	// with the log list (goldenFNOSpec, on goldenFNOGrid).
	"1D/fno":      "0201b891da0fb20c3fee94f6da1764e8f306cc3bc52f3e2cb76a62e1ee1502df",
	"1D/loglofno": "af6ceb0bd071d2f5bfa7d64ddd71d9060439c9701e714a02f2ac40b107696666",
	"2D/fno":      "2f591cde68757d0f53b7836ed4e6d7d9d69c156ac27a53c7dfc094424b70e183",
	"2D/loglofno": "74a1625810f12bc3b2f6993b05c1807c8ab9aaef7d4c3a5cd881a0c5edb7bf56",
	"3D/fno":      "b0bae16b8cc3d6667b57047daee73e24c082a5c64d9fb3e55326bf4ddb86ff45",
	"3D/loglofno": "f50f679ee9a7f68f6b4cd62035079a283b9dc4e719f1328647d92f7522fb72c7",
}

// goldenFNOGrid are the grids of the FNO and LogLo-FNO digests: the last
// axis has more than 2 K0 points, so LogModes(3, N) is not 0..2.
var goldenFNOGrid = map[int][]int{1: {32}, 2: {8, 16}, 3: {4, 6, 16}}

// goldenFNOSpec is the FNO (or LogLo-FNO) of the digests.
func goldenFNOSpec(dim int) FNOSpec {
	return FNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, Width: 4, K0: 3, Blocks: 2, ProjHidden: 5}
}

// skipUnlessGoldenPlatform skips t where the golden digests do not hold.
func skipUnlessGoldenPlatform(t *testing.T) {
	t.Helper()
	if runtime.GOARCH != "amd64" || !cpu.X86.HasAVX512F || !cpu.X86.HasAVX2 || !cpu.X86.HasFMA {
		t.Skip("the golden digests were taken on amd64 with AVX-512, AVX2 and FMA")
	}
}

// runDigest runs m forward and backward (with a fixed random output
// gradient) on a fixed input and hashes every value that comes out.
func runDigest(t *testing.T, b tensor.Backend, m Model, in int, grid []int) string {
	t.Helper()
	shape := append([]int{2, in}, grid...)
	x := tensor.NewLeaf(b, "x", gradcheck.Random(11, tensor.Numel(shape)), shape...)
	x.SetRequiresGrad(true)
	defer b.Free(x.Data)
	m.Params().ZeroGrad()
	tp := tensor.NewTape(b)
	defer tp.Release()
	y, aux := m.Forward(tp, x)
	seed := tp.FromHost(gradcheck.Random(12, y.Numel()), y.Shape...)
	tp.BackwardWith(y, seed)

	h := sha256.New()
	put := func(v []float32) {
		var buf [4]byte
		for _, f := range v {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(f))
			h.Write(buf[:])
		}
	}
	put(host(b, y))
	for _, z := range []*tensor.Tensor{aux.ZF, aux.ZG} {
		if z != nil {
			put(host(b, z))
		}
	}
	for _, mk := range aux.Masks {
		put(host(b, mk))
	}
	put(host(b, x.Grad))
	_, g, n := m.Params().Flat()
	gv := make([]float32, n)
	b.Download(gv, g)
	put(gv)
	return hex.EncodeToString(h.Sum(nil))
}

// TestDefaultBitIdentical checks that a default-spec model (every switch
// of issue 20 at its zero value) computes exactly the bits the code did
// before the switches: forward output, CBC features, masks and all
// gradients, for U-HNO in 1D-3D and several modes, for Conv-FNO, the
// baseline that shares Upsample2x, and for FNO and LogLo-FNO, whose
// spectral convolutions became one op with a frequency list (issue 21).
func TestDefaultBitIdentical(t *testing.T) {
	skipUnlessGoldenPlatform(t)
	b := newBackend()
	got := map[string]string{}
	for key := range goldenDefault {
		var dim int
		var name string
		fmt.Sscanf(key, "%dD/%s", &dim, &name)
		grid := checkGrid(dim)
		var m Model
		in := 2
		switch name {
		case "fno", "loglofno":
			build := NewFNO
			if name == "loglofno" {
				build = NewLogLoFNO
			}
			fm, err := build(b, goldenFNOSpec(dim), 7)
			if err != nil {
				t.Fatal(err)
			}
			m = fm
			grid = goldenFNOGrid[dim]
		case "convfno":
			s := ConvFNOSpec{Dim: dim, InChannels: 2, OutChannels: 1, UNetWidth: 2, UNetLevels: 3, Width: 4, K0: 3, Blocks: 2, ProjHidden: 5}
			cm, err := NewConvFNO(b, s, 7)
			if err != nil {
				t.Fatal(err)
			}
			m = cm
			grid = map[int][]int{1: {16}, 2: {8, 8}, 3: {8, 8, 8}}[dim]
		default:
			m = mustUHNO(t, b, tiny(dim, name), 7)
		}
		rescale(b, m, 70)
		got[key] = runDigest(t, b, m, in, grid)
		if want := goldenDefault[key]; got[key] != want && os.Getenv("UHNO_PRINT_GOLDEN") == "" {
			t.Errorf("%s: digest %s, want %s (the default numerics changed)", key, got[key], want)
		}
	}
	if os.Getenv("UHNO_PRINT_GOLDEN") != "" {
		for key, d := range got {
			fmt.Printf("\t%q: %q,\n", key, d)
		}
	}
}
