package tensor

import (
	"fmt"
	"strings"
)

// Storage is backend-owned memory holding Len float32 elements. Only the
// backend that allocated it may interpret it.
type Storage interface {
	Len() int
}

// Tensor is a dense float32 array of a given shape whose elements live in
// a backend Storage.
type Tensor struct {
	Shape []int
	Data  Storage
	// Grad is the gradient of the loss with respect to this tensor. It is
	// allocated on first use during Backward; nil means zero.
	Grad *Tensor
	// Name identifies parameters in checkpoints ("enc.0.spectral.w").
	Name string

	requiresGrad bool
	owner        *Tape // the tape whose pool holds Data, nil for leaves
}

// NewTensor wraps an existing storage. It panics if the storage is too small
// for the shape.
func NewTensor(data Storage, shape ...int) *Tensor {
	n := Numel(shape)
	if data.Len() < n {
		panic(fmt.Sprintf("tensor: storage of %d elements is too small for shape %v", data.Len(), shape))
	}
	return &Tensor{Shape: append([]int(nil), shape...), Data: data}
}

// RequiresGrad reports whether gradients flow to this tensor.
func (t *Tensor) RequiresGrad() bool { return t.requiresGrad }

// SetRequiresGrad marks t as a leaf whose gradient Backward should compute
// (parameters, or inputs in a gradient check).
func (t *Tensor) SetRequiresGrad(v bool) { t.requiresGrad = v }

// Numel is the number of elements.
func (t *Tensor) Numel() int { return Numel(t.Shape) }

// Batch is the leading (sample) axis length.
func (t *Tensor) Batch() int { return t.Shape[0] }

// Channels is the second axis length.
func (t *Tensor) Channels() int { return t.Shape[1] }

// Spatial returns the spatial axes (everything after batch and channels).
func (t *Tensor) Spatial() []int { return t.Shape[2:] }

// SpatialSize is the number of grid points per channel.
func (t *Tensor) SpatialSize() int { return Numel(t.Shape[2:]) }

// Dims is the number of spatial axes (1, 2 or 3).
func (t *Tensor) Dims() int { return len(t.Shape) - 2 }

func (t *Tensor) String() string {
	name := t.Name
	if name == "" {
		name = "tensor"
	}
	return fmt.Sprintf("%s%v", name, t.Shape)
}

// Numel is the product of a shape's axes (1 for an empty shape).
func Numel(shape []int) int {
	n := 1
	for _, s := range shape {
		n *= s
	}
	return n
}

// SameShape reports whether two shapes are equal.
func SameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// ShapeString formats a shape as 32x1x128.
func ShapeString(shape []int) string {
	parts := make([]string, len(shape))
	for i, s := range shape {
		parts[i] = fmt.Sprint(s)
	}
	return strings.Join(parts, "x")
}

// mustSame panics unless a and b have the same shape.
func mustSame(op string, a, b *Tensor) {
	if !SameShape(a.Shape, b.Shape) {
		panic(fmt.Sprintf("tensor: %s: shape mismatch %v vs %v", op, a.Shape, b.Shape))
	}
}

// mustField panics unless t is a field [B, C, spatial...] with 1..3 spatial axes.
func mustField(op string, t *Tensor) {
	if d := len(t.Shape) - 2; d < 1 || d > 3 {
		panic(fmt.Sprintf("tensor: %s: want shape [batch, channels, 1-3 spatial axes], got %v", op, t.Shape))
	}
}

// BandAxes pads two spatial shapes of one field (1 to 3 axes) at the
// front to three axes and lists the padded axes whose size changes
// between them: the axes a band-limited resampling (Backend.BandResample)
// has to pass over, as both backends walk them.
func BandAxes(from, to []int) (nFrom, nTo [3]int, axes []int) {
	nFrom, nTo = [3]int{1, 1, 1}, [3]int{1, 1, 1}
	for i := range from {
		a := 3 - len(from) + i
		nFrom[a], nTo[a] = from[i], to[i]
		if from[i] != to[i] {
			axes = append(axes, a)
		}
	}
	return nFrom, nTo, axes
}

// AxisLayout views a row-major array of the given shape as [outer, n,
// inner] around axis a: n = shape[a], outer the product of the sizes
// before it, inner of those after it. Finite differences and separable
// filters walk an axis this way.
func AxisLayout(shape []int, a int) (outer, n, inner int) {
	outer, n, inner = 1, shape[a], 1
	for d, s := range shape {
		switch {
		case d < a:
			outer *= s
		case d > a:
			inner *= s
		}
	}
	return outer, n, inner
}
