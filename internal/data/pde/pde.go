package pde

// Generator produces the trajectories of one task.
type Generator interface {
	// Datasets names the stored datasets of one trajectory, in order
	// ("tensor", or "nu" and "tensor" for Darcy).
	Datasets() []string
	// Shapes gives the per-trajectory shape of each dataset, e.g.
	// [51, 128] for Burgers or [50, 64, 64] for a 2D task.
	Shapes() [][]int
	// Generate fills dst[k] (one slice per dataset, of the product of
	// Shapes()[k] elements) with trajectory i. It must be safe to call
	// concurrently for different i.
	Generate(seed uint64, i int, dst [][]float32) error
	// Attrs are the solver settings stored as HDF5 attributes (name ->
	// value: float64, int, string or []float64).
	Attrs() map[string]any
	// Coords are the coordinate datasets ("x-coordinate", "t-coordinate",
	// ...), as PDEBench stores them.
	Coords() map[string][]float32
}
