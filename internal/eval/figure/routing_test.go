package figure

import (
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"testing"
)

// front returns a field of shape [n] or [n, n] with a front at x = n/2
// and, per level l, a hard mask of half the previous resolution that
// routes the points near the front (|x - 1/2| < w) to the Gaussian branch.
func front(n, rank, levels int) (field []float32, shape []int, masks [][]float32, shapes [][]int, names []string) {
	size := func(m int) int {
		if rank == 1 {
			return m
		}
		return m * m
	}
	shape = slices.Repeat([]int{n}, rank)
	field = make([]float32, size(n))
	for k := range field {
		i := k
		if rank == 2 {
			i = k / n
		}
		field[k] = float32(math.Tanh(20 * (float64(i)/float64(n) - 0.5)))
	}
	for l := range levels {
		m := n >> l
		g := make([]float32, size(m))
		for k := range g {
			i := k
			if rank == 2 {
				i = k / m
			}
			if math.Abs(float64(i)/float64(m)-0.5) >= 0.1 {
				g[k] = 1
			}
		}
		masks = append(masks, g)
		shapes = append(shapes, slices.Repeat([]int{m}, rank))
		names = append(names, "level "+string(rune('0'+l)))
	}
	return field, shape, masks, shapes, names
}

func TestRoutingMasks(t *testing.T) {
	type args struct {
		field      []float32
		fieldShape []int
		masks      [][]float32
		maskShapes [][]int
		levels     []string
	}
	mk := func(n, rank, levels int) args {
		f, s, m, ms, l := front(n, rank, levels)
		return args{f, s, m, ms, l}
	}
	tests := []struct {
		name         string
		a            args
		mod          func(a *args)
		wantErr      string
		wantW, wantH int
		wantNaN      bool
	}{
		{name: "1D, three levels", a: mk(256, 1, 3), wantW: 1500, wantH: 495 + 3*120},
		{name: "1D, NaN in field and mask", a: mk(64, 1, 2), mod: func(a *args) {
			a.field[3] = nan()
			a.masks[1][4] = nan()
		}, wantW: 1500, wantH: 495 + 2*120, wantNaN: true},
		{name: "2D, two levels", a: mk(32, 2, 2), wantW: 2025, wantH: 600},
		{name: "2D, four levels wrap", a: mk(32, 2, 4), wantW: 2025, wantH: 60 + 2*540},
		{name: "2D, one level", a: mk(16, 2, 1), wantW: 1350, wantH: 600},
		{name: "2D, soft mask with a NaN", a: mk(16, 2, 1), mod: func(a *args) {
			for k := range a.masks[0] {
				a.masks[0][k] = 0.5
			}
			a.masks[0][0] = nan()
		}, wantW: 1350, wantH: 600, wantNaN: true},
		{name: "rank 3", a: mk(8, 1, 1), mod: func(a *args) { a.fieldShape = []int{2, 2, 2} },
			wantErr: "fieldShape [2 2 2]: want [n] or [nx, ny]"},
		{name: "field too short", a: mk(8, 2, 1), mod: func(a *args) { a.field = a.field[1:] },
			wantErr: "field has 63 values, want 64 for fieldShape [8 8]"},
		{name: "zero size", a: mk(8, 2, 1), mod: func(a *args) { a.fieldShape = []int{0, 64} },
			wantErr: "fieldShape [0 64]: want sizes >= 1"},
		{name: "no masks", a: mk(8, 1, 1), mod: func(a *args) { a.masks, a.maskShapes, a.levels = nil, nil, nil },
			wantErr: "masks: none to draw"},
		{name: "levels short", a: mk(8, 1, 2), mod: func(a *args) { a.levels = a.levels[:1] },
			wantErr: "masks has 2 entries, maskShapes 2, levels 1: want the same count"},
		{name: "mask rank", a: mk(8, 2, 1), mod: func(a *args) { a.maskShapes[0] = []int{64} },
			wantErr: "maskShapes[0] [64]: want rank 2 like fieldShape [8 8]"},
		{name: "mask size", a: mk(8, 1, 2), mod: func(a *args) { a.maskShapes[1] = []int{5} },
			wantErr: "masks[1] has 4 values, want 5 for maskShapes[1] [5]"},
		{name: "gate out of range", a: mk(8, 1, 2), mod: func(a *args) { a.masks[1][2] = 1.5 },
			wantErr: "masks[1][2] = 1.5: want a gate value in [0, 1]"},
		{name: "negative gate", a: mk(8, 1, 1), mod: func(a *args) { a.masks[0][0] = -0.25 },
			wantErr: "masks[0][0] = -0.25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := tt.a
			if tt.mod != nil {
				tt.mod(&a)
			}
			path := filepath.Join(t.TempDir(), "routing.png")
			err := RoutingMasks(path, "Burgers routing", a.field, a.fieldShape, a.masks, a.maskShapes, a.levels)
			if !checkOutcome(t, err, path, tt.wantErr, tt.wantW, tt.wantH) {
				return
			}
			if got := countColour(t, path, nanGreen) > 0; got != tt.wantNaN {
				t.Errorf("non-finite colour drawn: %v, want %v", got, tt.wantNaN)
			}
		})
	}
}

// TestRoutingColours checks the mask colours: g = 1 (Fourier) red and
// g = 0 (Gaussian) blue, as in the paper's figure.
func TestRoutingColours(t *testing.T) {
	gs, err := newScale(diverging(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	isRed := func(c color.RGBA) bool { return c.R > 150 && c.B < 80 }
	isBlue := func(c color.RGBA) bool { return c.B > 150 && c.R < 80 }
	if c := gs.colour(1); !isRed(c) {
		t.Errorf("g = 1 drawn %v, want red", c)
	}
	if c := gs.colour(0); !isBlue(c) {
		t.Errorf("g = 0 drawn %v, want blue", c)
	}
}

func TestLevelTitle(t *testing.T) {
	tests := []struct {
		level string
		shape []int
		m     []float32
		want  string
	}{
		{"enc0", []int{4}, []float32{1, 1, 0, 1}, "enc0, 4: mean g = 0.75"},
		{"enc1", []int{2, 2}, []float32{0.5, 0.5, 0, 1}, "enc1, 2x2: mean g = 0.50"},
		{"mid", []int{2}, []float32{1, nan()}, "mid, 2: mean g = 1.00 (1 non-finite)"},
		{"dead", []int{1}, []float32{nan()}, "dead, 1: no finite g"},
	}
	for _, tt := range tests {
		if got := levelTitle(tt.level, tt.shape, tt.m); got != tt.want {
			t.Errorf("levelTitle(%q, %v, %v) = %q, want %q", tt.level, tt.shape, tt.m, got, tt.want)
		}
	}
}
