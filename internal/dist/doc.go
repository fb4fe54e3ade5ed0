// Package dist is uhno's data-parallel communication layer: the rank and
// size of this process in a job started by an MPI launcher (mpirun, srun),
// and the three collectives data-parallel training needs: an all-reduce
// sum of gradients, a broadcast of the initial weights, and a barrier.
//
// # Why MPI, loaded at run time
//
// HPC users start jobs with their site's MPI launcher, across nodes and
// with their interconnect; uhno uses that engine rather than a protocol
// of its own. The binary does not link libmpi: users run the ordinary
// `bin/uhno` both alone and under `mpirun -np N bin/uhno train ...`, and
// a machine without Open MPI must still run it. Open therefore reads the
// launcher's environment (Detect) and only under a launcher loads
// libmpi.so.40 with dlopen (as the CUDA backend loads cuFFT). A process
// started without a launcher gets Single: rank 0 of 1, collectives that
// return at once, no MPI library needed. If the launcher says the job has
// several ranks and libmpi cannot be loaded, Open returns a one-line
// error naming the library and what to install.
//
// Only Open MPI's ABI is supported: its handles (MPI_COMM_WORLD,
// MPI_FLOAT, MPI_SUM, ...) are the addresses of global objects
// (ompi_mpi_comm_world, ...), which dlsym resolves. MPICH encodes them as
// integers; a libmpi without Open MPI's symbols is refused by name.
//
// # One thread, and a time limit on every call
//
// MPI is initialised at MPI_THREAD_FUNNELED and every MPI call runs on one
// OS thread locked to one goroutine (Go moves goroutines between threads;
// MPI requires calls from the thread that initialised it). A caller hands
// each call to that thread and waits at most the Comm's timeout. When a
// rank dies, the launcher normally kills the job (Open MPI's mpirun does);
// where it does not, or a rank hangs, the survivors' collectives time out
// and return a one-line error instead of waiting forever. After a timeout
// the MPI thread may stay blocked inside MPI: the Comm refuses every later
// call and Close does not finalize, so the process can exit; MPI_Finalize
// would wait for the missing rank.
//
// # Global state
//
// dlopen is process-wide: the library is loaded once, with RTLD_GLOBAL
// (Open MPI's plugins resolve libmpi's symbols through it), and MPI can
// be initialised once per process; Open refuses a second MPI Comm. Before
// MPI_Init, OMPI_MCA_opal_signal is set to the empty string unless the
// user set it: Open MPI would otherwise install its own SIGSEGV, SIGBUS,
// SIGFPE and SIGABRT handlers over the Go runtime's. Nothing else is
// global.
//
// # Launchers, libraries and handles
//
// Launch and library. One process per rank, started by the launcher
// users already have (`mpirun -np N bin/uhno train ...`, `srun`), with the
// ordinary binary. So uhno does not link libmpi (a build tag or a second
// binary would make users pick a build, and a binary linked with
// `-lmpi` would not start where Open MPI is absent). `dist.Open` reads the
// launcher's environment (`OMPI_COMM_WORLD_SIZE/RANK/LOCAL_SIZE`,
// `PMI_SIZE/RANK`, `PMIX_RANK`, `SLURM_PROCID` with `SLURM_STEP_NUM_TASKS` or
// `SLURM_NTASKS` inside a step, not in a batch script's shell); without one
// it returns `dist.Single` (rank 0 of 1, collectives that return at once)
// and no MPI library is touched, so a single process behaves exactly as
// before. Under a launcher it `dlopen`s `$UHNO_LIBMPI`, `libmpi.so.40`, then
// `libmpi.so` with `RTLD_GLOBAL` (Open MPI's plugins resolve libmpi's symbols
// through the global namespace) and resolves the ten MPI functions and
// Open MPI's predefined handles, which are addresses of global objects
// (`ompi_mpi_comm_world`, `ompi_mpi_float`, `ompi_mpi_double`,
// `ompi_mpi_byte`, `ompi_mpi_op_sum`, `ompi_mpi_errors_return`). MPICH
// encodes handles as integers; its libmpi lacks those symbols and is refused
// by name. A launcher of several ranks with no loadable libmpi is a one-line
// error naming every path tried and the Debian packages; a launcher of one
// rank without libmpi runs alone. The rank and size MPI reports must match
// the launcher's, which catches an mpirun of another MPI than the libmpi
// loaded.
//
// The error handler of MPI_COMM_WORLD is MPI_ERRORS_RETURN, so a failed call
// becomes uhno's one-line error rather than Open MPI's multi-line abort.
// The time limit is `uhno train --dist-timeout` (default 5 minutes).
//
// What data-parallel training does with these collectives is in the
// package documentation of internal/train, "Data parallel in detail".
package dist
