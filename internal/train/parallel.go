package train

import (
	"fmt"
	"hash/fnv"
	"unsafe"

	"uhno/internal/dist"
	"uhno/internal/tensor"
)

// This file holds what Run does differently as one rank of a
// data-parallel run (Config.Comm): agreeing on the starting point,
// reducing each step's gradient, and checking that the ranks' weights
// stay equal.

// startTogether makes every rank start from rank 0's weights and AdamW
// moments (broadcast: identical bits whatever each rank's initialisation
// or file system gave), after checking that all ranks have the same
// parameter count, batch and position in the run (a resume on a rank that
// sees another run directory would otherwise continue another run).
func startTogether(c dist.Comm, b tensor.Backend, st *State, pdata, m, v tensor.Storage, n int) error {
	differ, err := dist.Agree(c, []uint64{uint64(n), uint64(st.Data.Batch), uint64(st.Step), uint64(st.Data.Drawn)})
	if err != nil {
		return fmt.Errorf("train: starting the ranks together: %w", err)
	}
	if differ != nil {
		return fmt.Errorf("train: rank(s) %v start from another model, batch or step than rank 0 (here rank %d: %d parameters, batch %d, step %d): every rank must be given the same settings and see the same run directory (a shared file system)",
			differ, c.Rank(), n, st.Data.Batch, st.Step)
	}
	host := make([]float32, n)
	for _, s := range []tensor.Storage{pdata, m, v} {
		b.Download(host, s)
		if err := dist.BroadcastFloat32(c, host, 0); err != nil {
			return fmt.Errorf("train: broadcasting rank 0's weights: %w", err)
		}
		b.Upload(s, host)
	}
	return nil
}

// checkSameWeights compares an FNV-1a checksum of every rank's weights
// with rank 0's: after identical updates they are equal bit for bit, so
// any difference is a fault (a rank that computed something else) that
// must stop the run before a checkpoint of either version is written.
func checkSameWeights(c dist.Comm, b tensor.Backend, pdata tensor.Storage, n int) error {
	host := make([]float32, n)
	b.Download(host, pdata)
	h := fnv.New64a()
	if n > 0 {
		h.Write(unsafe.Slice((*byte)(unsafe.Pointer(&host[0])), 4*n))
	}
	differ, err := dist.Agree(c, []uint64{h.Sum64()})
	if err != nil {
		return fmt.Errorf("comparing the ranks' weights: %w", err)
	}
	if differ != nil {
		return fmt.Errorf("the ranks' weights diverged: rank(s) %v differ from rank 0 (checksum of the %d weights)", differ, n)
	}
	return nil
}

// reducer all-reduces one step of a data-parallel run: the gradient (the
// model's flat gradient buffer), the loss terms, the SPAR statistics and
// a stop flag, in one call.
type reducer struct {
	comm dist.Comm
	b    tensor.Backend
	grad tensor.Storage
	n    int
	buf  []float32
	// device, when set, sums the gradient across the ranks on the device
	// (Config.ReduceOnDevice); the host buffer then carries the rest.
	device func(grad tensor.Storage, n int) error
}

// reduce replaces the gradient by the mean of the ranks' gradients and
// returns the ranks' mean loss terms, their summed SPAR statistics, and
// whether any rank asked to stop. With equal shares of the global batch
// the mean of the ranks' mean-over-share gradients is the gradient of the
// mean over the global batch.
func (r *reducer) reduce(vals LossValues, stats []*tensor.Tensor, stop bool) (LossValues, *sparSums, bool, error) {
	local := sumSPAR(r.b, stats)
	levels := len(local.c)
	k := float32(r.comm.Size())
	ng := r.n // the gradient's part of the host buffer
	if r.device != nil {
		ng = 0
		if err := r.device(r.grad, r.n); err != nil {
			return vals, nil, false, err
		}
		g := tensor.NewTensor(r.grad, r.n)
		r.b.Scale(g, g, 1/k)
	}
	size := ng + 6 + 2*levels
	if len(r.buf) != size {
		r.buf = make([]float32, size)
	}
	buf := r.buf
	if ng > 0 {
		r.b.Download(buf[:ng], r.grad)
	}
	tail := buf[ng:]
	tail[0], tail[1], tail[2], tail[3] = float32(vals.Total), float32(vals.MSE), float32(vals.H1), float32(vals.CBC)
	tail[4] = 0
	if stop {
		tail[4] = 1
	}
	tail[5] = float32(local.rows)
	for l := range levels {
		tail[6+l] = float32(local.c[l])
		tail[6+levels+l] = float32(local.rho[l])
	}
	if err := r.comm.AllReduceSum(buf); err != nil {
		return vals, nil, false, err
	}
	if ng > 0 {
		grad := buf[:ng]
		for i := range grad {
			grad[i] /= k
		}
		r.b.Upload(r.grad, grad)
	}
	kk := float64(k)
	mean := LossValues{Total: float64(tail[0]) / kk, MSE: float64(tail[1]) / kk, H1: float64(tail[2]) / kk, CBC: float64(tail[3]) / kk}
	all := &sparSums{rows: float64(tail[5])}
	for l := range levels {
		all.c = append(all.c, float64(tail[6+l]))
		all.rho = append(all.rho, float64(tail[6+levels+l]))
	}
	return mean, all, tail[4] != 0, nil
}

// sparSums are the sums of SPAR's contrast c and keep-ratio rho per
// routing level over the samples (rows) of a batch.
type sparSums struct {
	c, rho []float64
	rows   float64
}

// sumSPAR sums the contrast and keep-ratio columns of SPARKeep's [B, 3] =
// (c, rho, k) statistics of each routing level.
func sumSPAR(b tensor.Backend, stats []*tensor.Tensor) *sparSums {
	s := &sparSums{}
	for _, st := range stats {
		h := tensor.ToHost(b, st)
		var r, c float64
		rows := st.Shape[0]
		for i := range rows {
			c += float64(h[3*i])
			r += float64(h[3*i+1])
		}
		s.c, s.rho = append(s.c, c), append(s.rho, r)
		s.rows = float64(rows)
	}
	return s
}

// means returns the batch means of rho and c per routing level (nil
// without routing levels).
func (s *sparSums) means() (rho, contrast []float64) {
	for l := range s.c {
		rho = append(rho, s.rho[l]/s.rows)
		contrast = append(contrast, s.c[l]/s.rows)
	}
	return rho, contrast
}
