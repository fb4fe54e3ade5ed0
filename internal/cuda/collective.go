//go:build cuda || cudaemu

package cuda

import (
	"fmt"
	"time"

	"uhno/internal/dist"
	"uhno/internal/tensor"
)

// Data parallel on GPUs: the gradient all-reduce on the device.
//
// Under uhno-cuda each rank of an mpirun/srun job drives one GPU. Summing
// the gradients through MPI would copy them to the host and back every
// step; instead the backend joins an NCCL communicator (JoinRanks: rank 0
// makes its unique id, the MPI group broadcasts it) and AllReduceSum sums
// a device buffer over the ranks in place, on the backend's stream.
// Training uses it through train.Config.ReduceOnDevice; the loss terms
// and the stop flag, a few floats, still go through MPI.
//
// Under the emulator (tag cudaemu) device memory is host memory and there
// is no NCCL: the all-reduce goes through the MPI group itself, so the
// device path of training is exercised by the emulator's tests while
// NCCL's own calls are compile-checked only (package nccl).

// JoinRanks makes the backend one rank of the data-parallel group c; an
// all-reduce that has not completed after timeout (0: no limit) aborts
// the communicator and fails.
func (b *Backend) JoinRanks(c dist.Comm, timeout time.Duration) error {
	if err := b.drv.JoinRanks(c, timeout); err != nil {
		return fmt.Errorf("cuda: joining the ranks' NCCL group (rank %d of %d): %w", c.Rank(), c.Size(), err)
	}
	return nil
}

// AllReduceSum replaces the first n values of s by their sum over the
// ranks (JoinRanks first), after the work already on the stream, and
// waits for it. It has train.Config.ReduceOnDevice's signature.
func (b *Backend) AllReduceSum(s tensor.Storage, n int) error {
	buf, ok := s.(*Buf)
	if !ok || n > buf.n {
		return fmt.Errorf("cuda: all-reduce of %d values of storage %T (length %d)", n, s, s.Len())
	}
	if err := b.drv.AllReduceSum(buf.ptr, n); err != nil {
		return fmt.Errorf("cuda: all-reduce of %d values: %w", n, err)
	}
	return nil
}
