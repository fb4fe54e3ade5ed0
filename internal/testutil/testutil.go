// Package testutil holds the helpers that the tests of several packages
// share, so each exists once: checking a written PNG, comparing float32
// buffers bit for bit, a tiny U-HNO spec, listing what a writer left in a
// directory. Only _test.go files import it.
package testutil

import (
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"uhno/internal/model"
	"uhno/internal/tensor"
)

// ReadPNG decodes the PNG at path, failing t when it cannot.
func ReadPNG(t testing.TB, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

// CheckPNG fails t unless path is a PNG that decodes; with w and h > 0 it
// must also be w×h pixels.
func CheckPNG(t testing.TB, path string, w, h int) {
	t.Helper()
	img := ReadPNG(t, path)
	if b := img.Bounds(); w > 0 && h > 0 && (b.Dx() != w || b.Dy() != h) {
		t.Errorf("%s: %d×%d pixels, want %d×%d", filepath.Base(path), b.Dx(), b.Dy(), w, h)
	}
}

// SameBits reports whether a and b hold the same float32 values bit for
// bit (NaNs with the same payload equal, 0 and -0 differ).
func SameBits(a, b []float32) bool {
	return slices.EqualFunc(a, b, func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) })
}

// TinyUHNO is a small U-HNO on a 1D or 2D grid: L = 2, C0 = 4, in input
// channels, one output, sigmas kept away from integer radii and K0 so
// that the mode cap bites at coarse levels; mode is the ablation mode
// (model.ModeFull for the full model).
func TinyUHNO(dim, in int, mode string) model.Spec {
	k0 := 5
	if dim > 1 {
		k0 = 3
	}
	return model.Spec{Dim: dim, InChannels: in, OutChannels: 1, Levels: 2, C0: 4, WidthMult: 2, K0: k0,
		M: 3, Sigmas: []float64{0.55, 1.2, 2.5}, Groups: 2, MaxRadius: 16, ProjHidden: 8, Mode: mode, SPAR: tensor.DefaultSPAR}
}

// Extra lists the entries of dir other than want: what a writer left
// behind (temporary files).
func Extra(t testing.TB, dir string, want ...string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, e := range ents {
		if !slices.Contains(want, e.Name()) {
			extra = append(extra, e.Name())
		}
	}
	return extra
}

// ErrorSays fails t unless err is a one-line error whose text contains
// each of want.
func ErrorSays(t testing.TB, err error, want ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one saying %q", want)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q lacks %q", msg, w)
		}
	}
}

// ModesOr returns modes, or, when it is nil, tensor.LogModes(k0, N) of the
// last axis of shape: the frequency list of a spectral-convolution test
// case that either names its list or asks for LogLo-FNO's.
func ModesOr(modes []int, shape []int, k0 int) []int {
	if modes == nil {
		return tensor.LogModes(k0, shape[len(shape)-1])
	}
	return modes
}
