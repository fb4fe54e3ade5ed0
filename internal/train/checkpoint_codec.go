package train

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/maruel/safetensors"

	"uhno/internal/tensor"
)

// hostWeights returns the parameters' names, host values and shapes.
func hostWeights(params []*tensor.Tensor, b tensor.Backend) (names []string, vals [][]float32, shapes [][]int, err error) {
	names = make([]string, len(params))
	vals = make([][]float32, len(params))
	shapes = make([][]int, len(params))
	for i, p := range params {
		if p.Name == "" {
			return nil, nil, nil, fmt.Errorf("train: checkpoint: parameter %d (shape %v) has no name", i, p.Shape)
		}
		names[i], vals[i], shapes[i] = p.Name, tensor.ToHost(b, p), p.Shape
	}
	return names, vals, shapes, nil
}

// encodeTensors serialises flat float32 vectors.
func encodeTensors(names []string, vals [][]float32, meta map[string]string) ([]byte, error) {
	shapes := make([][]int, len(vals))
	for i, v := range vals {
		shapes[i] = []int{len(v)}
	}
	return encodeShaped(names, vals, shapes, meta)
}

func encodeShaped(names []string, vals [][]float32, shapes [][]int, meta map[string]string) ([]byte, error) {
	f := safetensors.File{Metadata: meta, Tensors: make([]safetensors.Tensor, len(names))}
	seen := map[string]bool{}
	for i, name := range names {
		if seen[name] {
			return nil, fmt.Errorf("train: checkpoint: two parameters named %q", name)
		}
		seen[name] = true
		shape := make([]uint64, len(shapes[i]))
		for j, s := range shapes[i] {
			shape[j] = uint64(s)
		}
		raw := make([]byte, 4*len(vals[i]))
		for j, x := range vals[i] {
			binary.LittleEndian.PutUint32(raw[4*j:], math.Float32bits(x))
		}
		f.Tensors[i] = safetensors.Tensor{Name: name, DType: safetensors.F32, Shape: shape, Data: raw}
	}
	var buf bytesWriter
	if err := f.Serialize(&buf); err != nil {
		return nil, fmt.Errorf("train: checkpoint: %w", err)
	}
	return buf, nil
}

// bytesWriter is an io.Writer appending to a byte slice.
type bytesWriter []byte

func (w *bytesWriter) Write(p []byte) (int, error) {
	*w = append(*w, p...)
	return len(p), nil
}

// float32s decodes a little-endian F32 safetensors tensor.
func float32s(t safetensors.Tensor) []float32 {
	out := make([]float32, len(t.Data)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return out
}
