package figure

import (
	"image"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"uhno/internal/testutil"
)

// nanGreen is the colour non-finite values are drawn in (scale.nan).
var nanGreen = color.RGBA{R: 0, G: 170, B: 0, A: 255}

// checkFigure asserts that path is a non-empty PNG of w×h pixels and that it
// is the only entry of its directory (no temporary file left behind).
func checkFigure(t *testing.T, path string, w, h int) {
	t.Helper()
	testutil.CheckPNG(t, path, w, h)
	onlyEntries(t, filepath.Dir(path), filepath.Base(path))
}

// checkOutcome asserts a table case's outcome: with wantErr the failure
// checkFailed describes, else a w×h figure at path (checkFigure). It
// reports whether a figure was drawn, for checks of what it shows.
func checkOutcome(t *testing.T, err error, path, wantErr string, w, h int) (drawn bool) {
	t.Helper()
	if wantErr != "" {
		checkFailed(t, err, path, wantErr)
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	checkFigure(t, path, w, h)
	return true
}

// checkFailed asserts that err is an error naming path and containing
// want, and that the directory holds nothing (no figure, no temporary).
func checkFailed(t *testing.T, err error, path, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	if msg := err.Error(); !strings.Contains(msg, want) || !strings.HasPrefix(msg, "figure: "+path+": ") {
		t.Errorf("error %q, want prefix %q and %q in it", msg, "figure: "+path+": ", want)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q spans several lines", err)
	}
	onlyEntries(t, filepath.Dir(path))
}

// onlyEntries asserts that dir holds exactly the named entries.
func onlyEntries(t *testing.T, dir string, names ...string) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

// countColour returns how many pixels of the PNG at path are exactly c.
func countColour(t *testing.T, path string, c color.RGBA) int {
	t.Helper()
	img := testutil.ReadPNG(t, path)
	n := 0
	if rgba, ok := img.(*image.RGBA); ok { // what the encoder's RGB comes back as
		for i := 0; i+3 < len(rgba.Pix); i += 4 {
			if (color.RGBA{rgba.Pix[i], rgba.Pix[i+1], rgba.Pix[i+2], rgba.Pix[i+3]}) == c {
				n++
			}
		}
		return n
	}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if color.RGBAModel.Convert(img.At(x, y)).(color.RGBA) == c {
				n++
			}
		}
	}
	return n
}

// wave returns a [steps, n] travelling wave, and a prediction that drifts
// from it as time goes on.
func wave(steps, n int) (truth, pred []float32) {
	truth = make([]float32, steps*n)
	pred = make([]float32, steps*n)
	for s := range steps {
		for i := range n {
			x, tt := float64(i)/float64(n), float64(s)/float64(steps)
			v := math.Sin(2 * math.Pi * (x - 0.3*tt))
			truth[s*n+i] = float32(v)
			pred[s*n+i] = float32(v + 0.1*tt*math.Sin(12*x))
		}
	}
	return truth, pred
}

// nan is a float32 NaN.
func nan() float32 { return float32(math.NaN()) }
