package dist

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
	"unsafe"
)

// Comm is this process's place in a data-parallel job: its rank among
// Size processes and the collectives between them. Every rank must make
// the same calls in the same order. A Comm is not safe for concurrent
// use.
type Comm interface {
	// Rank is this process's index, 0 <= Rank < Size; rank 0 writes the
	// run's files.
	Rank() int
	// Size is the number of processes in the job.
	Size() int
	// AllReduceSum replaces buf on every rank by the element-wise sum of
	// every rank's buf (same length everywhere), in float32.
	AllReduceSum(buf []float32) error
	// AllReduceSum64 is AllReduceSum in float64.
	AllReduceSum64(buf []float64) error
	// Broadcast replaces buf on every rank by root's buf (same length
	// everywhere).
	Broadcast(buf []byte, root int) error
	// Barrier returns once every rank has called it. Unlike the other
	// calls it has no time limit: it is where the ranks wait for rank 0's
	// one-off work of unknown length (generating the data on first use).
	// A rank that dies meanwhile is caught by the launcher, which ends
	// the job.
	Barrier() error
	// Close finalizes MPI after a run that ended well. After an error
	// the process should exit without calling it: the other ranks may
	// never reach MPI_Finalize.
	Close() error
}

// DefaultTimeout is how long a collective waits for the other ranks
// before it gives up with an error: long enough for rank 0 to write a
// checkpoint or run a training-dynamics probe while the others wait, short
// enough that a job whose rank died stops well within the hour.
const DefaultTimeout = 5 * time.Minute

// Single is the Comm of a process that runs alone: rank 0 of 1, every
// collective returns at once with buf unchanged.
type Single struct{}

func (Single) Rank() int                      { return 0 }
func (Single) Size() int                      { return 1 }
func (Single) AllReduceSum([]float32) error   { return nil }
func (Single) AllReduceSum64([]float64) error { return nil }
func (Single) Barrier() error                 { return nil }
func (Single) Close() error                   { return nil }

// Broadcast checks root and leaves buf as it is.
func (Single) Broadcast(_ []byte, root int) error {
	if root != 0 {
		return fmt.Errorf("dist: broadcast from rank %d in a job of 1", root)
	}
	return nil
}

// Launch is what a launcher's environment says about this process.
type Launch struct {
	// Launcher names the launcher ("Open MPI", "PMI", "Slurm"); empty
	// when none was found.
	Launcher string
	// Rank and Size are this process's rank and the job's size as the
	// launcher states them (Size 0: the launcher does not say).
	Rank, Size int
	// LocalSize is the number of ranks on this node (0: unknown).
	LocalSize int
}

// Detect reads a launcher's variables through env (os.Getenv in
// production): Open MPI's mpirun (OMPI_COMM_WORLD_SIZE, _RANK,
// _LOCAL_SIZE), a PMI or PMIx launcher such as MPICH's hydra
// (PMI_SIZE/PMI_RANK, PMIX_RANK), and Slurm's srun (SLURM_STEP_NUM_TASKS
// or SLURM_NTASKS with SLURM_PROCID, counted only inside a job step,
// SLURM_STEP_ID: a batch script's own shell is not a rank). It returns
// the zero Launch when none is present, and an error naming the variable
// when one holds no number.
func Detect(env func(string) string) (Launch, error) {
	num := func(name string) (int, bool, error) {
		v := env(name)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, false, fmt.Errorf("dist: %s=%q: want a number >= 0", name, v)
		}
		return n, true, nil
	}
	type source struct {
		launcher, size, rank, local string
	}
	for _, s := range []source{
		{"Open MPI", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
		{"PMI", "PMI_SIZE", "PMI_RANK", "MPI_LOCALNRANKS"},
		// Slurm before PMIx: srun --mpi=pmix sets both, and only
		// Slurm's variables give the size.
		{"Slurm", "SLURM_STEP_NUM_TASKS", "SLURM_PROCID", "SLURM_STEP_TASKS_PER_NODE"},
		{"PMIx", "", "PMIX_RANK", ""},
	} {
		if s.launcher == "Slurm" {
			if step := env("SLURM_STEP_ID"); step == "" || step == "batch" || step == "extern" {
				continue
			}
			if env(s.size) == "" {
				s.size = "SLURM_NTASKS"
			}
		}
		rank, hasRank, err := num(s.rank)
		if err != nil {
			return Launch{}, err
		}
		size, hasSize := 0, false
		if s.size != "" {
			if size, hasSize, err = num(s.size); err != nil {
				return Launch{}, err
			}
		}
		if !hasRank && !hasSize {
			continue
		}
		l := Launch{Launcher: s.launcher, Rank: rank, Size: size}
		if hasSize && rank >= size {
			return Launch{}, fmt.Errorf("dist: %s=%d but %s=%d: the rank must be below the job's size", s.rank, rank, s.size, size)
		}
		if s.local != "" {
			// Slurm writes "2(x3)" style lists: a leading number is enough.
			v := env(s.local)
			n := 0
			for _, c := range v {
				if c < '0' || c > '9' {
					break
				}
				n = 10*n + int(c-'0')
			}
			l.LocalSize = n
		}
		return l, nil
	}
	return Launch{}, nil
}

// Options configure Open.
type Options struct {
	// Timeout bounds every collective but Barrier (0: DefaultTimeout).
	Timeout time.Duration
	// Env reads the environment (nil: os.Getenv).
	Env func(string) string
	// Libraries are the libmpi files to try, in order (nil: $UHNO_LIBMPI
	// when set, then DefaultLibraries).
	Libraries []string
}

// EnvLibrary names a libmpi to load before the default names.
const EnvLibrary = "UHNO_LIBMPI"

// DefaultLibraries are the sonames tried in order: Open MPI 3 to 5 ship
// libmpi.so.40 (Debian bookworm: 4.1.4).
var DefaultLibraries = []string{"libmpi.so.40", "libmpi.so"}

// Open returns this process's Comm: Single without a launcher, else MPI
// initialised through the libmpi found at run time (see the package
// documentation). Under a launcher of size 1 whose libmpi is missing it
// also returns Single; with more ranks a missing libmpi is an error.
func Open(opt Options) (Comm, Launch, error) {
	env := opt.Env
	if env == nil {
		env = os.Getenv
	}
	l, err := Detect(env)
	if err != nil {
		return nil, l, err
	}
	if l.Launcher == "" {
		return Single{}, l, nil
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	names := opt.Libraries
	if names == nil {
		names = DefaultLibraries
		if lib := env(EnvLibrary); lib != "" {
			names = append([]string{lib}, names...)
		}
	}
	c, err := openMPI(names, timeout)
	if err != nil {
		if errors.Is(err, errNoLibrary) && l.Size == 1 {
			return Single{}, l, nil
		}
		return nil, l, fmt.Errorf("dist: started by %s as rank %d of %s, but %w", l.Launcher, l.Rank, sizeText(l.Size), err)
	}
	if l.Size > 0 && (c.Size() != l.Size || c.Rank() != l.Rank) {
		return nil, l, fmt.Errorf("dist: %s says rank %d of %d, MPI says rank %d of %d; is libmpi the one of the launcher (mpirun from Open MPI)?", l.Launcher, l.Rank, l.Size, c.Rank(), c.Size())
	}
	return c, l, nil
}

func sizeText(n int) string {
	if n == 0 {
		return "an unstated number"
	}
	return strconv.Itoa(n)
}

// errNoLibrary marks a libmpi that could not be loaded at all.
var errNoLibrary = errors.New("libmpi not found")

// BroadcastFloat32 broadcasts a float32 slice from root (Comm.Broadcast on
// its bytes).
func BroadcastFloat32(c Comm, buf []float32, root int) error {
	if len(buf) == 0 {
		return c.Broadcast(nil, root)
	}
	return c.Broadcast(unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 4*len(buf)), root)
}

// Agree checks that every rank holds the same vals as rank 0: rank 0's
// are broadcast, each rank compares, and the result is all-reduced so that
// every rank returns the same answer. It returns the ranks whose values
// differ (nil: all agree).
func Agree(c Comm, vals []uint64) ([]int, error) {
	if c.Size() == 1 {
		return nil, nil
	}
	mine := make([]byte, 8*len(vals))
	for i, v := range vals {
		for k := range 8 {
			mine[8*i+k] = byte(v >> (8 * k))
		}
	}
	root := append([]byte(nil), mine...)
	if err := c.Broadcast(root, 0); err != nil {
		return nil, err
	}
	flags := make([]float32, c.Size())
	if string(root) != string(mine) {
		flags[c.Rank()] = 1
	}
	if err := c.AllReduceSum(flags); err != nil {
		return nil, err
	}
	var differ []int
	for r, f := range flags {
		if f != 0 {
			differ = append(differ, r)
		}
	}
	return differ, nil
}
