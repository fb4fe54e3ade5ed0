// Package h5 is the HDF5 file layer of uhno's data: it writes the
// self-generated datasets and reads them back together with PDEBench's
// files, all in one layout (GUIDE section 3), through gonum.org/v1/hdf5.
//
// # Layout
//
// Every dataset lives at the root and is indexed by trajectory first:
//
//	tensor           float32 [b, t, x...]   time-dependent tasks (1D, 2D) and PDEBench 1D Burgers
//	nu, tensor       float32 [b, x, y], [b, 1, x, y]   Darcy: coefficient a and solution u
//	density, pressure, Vx, Vy, Vz   float32 [b, t, x, y, z]   PDEBench 3D CFD
//	x-coordinate ... float32 [n]            grid coordinates (PDEBench: cell centres)
//	t-coordinate     float32 [n]            snapshot times
//
// The solver settings are root attributes (h5py's f.attrs): Nu for
// PDEBench Burgers, beta for Darcy, eta, zeta and M for 3D CFD, and
// whatever the generator reports (pde.Generator.Attrs) for uhno's files.
//
// # What uhno adds
//
// Files written by Writer also carry, all ignored by PDEBench-style
// readers:
//
//   - attribute "uhno-format" = "uhno-pdebench/1": marks the file as uhno's;
//   - attribute "uhno-spec": the SHA-256 fingerprint of the datasets, shapes,
//     attributes, coordinates and trajectory count (Spec.Fingerprint), so a
//     later run can tell whether an existing or half-written file was made
//     with the same settings;
//   - attribute "uhno-trajectories": b;
//   - dataset "uhno-written" uint8 [b] and "uhno-crc32" uint32 [b]: which
//     trajectories are on disk and their CRC-32C, for resuming;
//   - attribute "complete" = 1, written last.
//
// Trajectory datasets are chunked (one chunk per trajectory while it holds
// at most 1 MiB, otherwise the trajectory's leading axes are halved until a
// chunk fits) and gzip-compressed at level 4. Coordinates are contiguous.
//
// # Writing safely
//
// Writer streams: trajectory i is written (hyperslab [i, ...]) as soon as
// it is produced, then flushed, then marked in uhno-written with its CRC
// and flushed again. It writes to atomicfile.TempPath(<path>) and Commit
// sets "complete" and publishes the file to <path> (atomicfile.Publish:
// fsync, rename, fsync the directory); so <path> exists only
// when complete. An interrupted run leaves the temporary file behind; the
// next Create for the same path resumes it when its fingerprint matches,
// keeping the trajectories whose CRC verifies, and deletes it otherwise.
// A lock file "<path>.lock" (flock, released by the kernel when its
// process dies) keeps two writers off one path. Open refuses a uhno file
// without complete = 1 (for example a temporary file copied by hand).
//
// # Reading
//
// File.Read reads one hyperslab (SelectHyperslab + ReadSubset): offset,
// count and stride per axis, so a reader takes one trajectory, or a window
// of frames of one trajectory, and never the whole file (PDEBench's 3D file
// is 88 GB). A stride subsamples on read. Only little-endian float32 and
// float64 datasets are accepted (gonum reads in the file's element type),
// float64 being converted to float32.
//
// # Errors
//
// Bad files give one-line errors that name the path: a missing file (with
// where PDEBench files come from: the DaRUS repository of PDEBench,
// doi:10.18419/darus-2986), an empty or non-HDF5 file, one HDF5 cannot open
// (truncated or corrupt), one left incomplete by an interrupted write, a
// failed read. Misuse by the caller (a buffer of the wrong length) panics
// with an "h5:" prefix.
//
// A well-formed file can still declare what it does not hold: HDF5 lets a
// dataset of any shape exist without storage (reads return the fill
// value). So shapes are checked before they size anything: every shape's
// element count must fit an int, a dataset read whole (ReadAll, the
// bookkeeping) must not declare more values than the file has bytes, and
// bookkeeping datasets must have Writer's element types, since gonum
// reads in the file's type. FuzzOpenMetadata exercises this.
//
// Package internal/data builds the datasets, splits and batches on top.
//
// # The writer, as datagen drives it
//
// `datagen` is expected to drive `h5.Writer` like this:
//
//	spec := h5.SpecOf(gen, seed)              // the seed joins the attributes
//	if ok, why := h5.Existing(path, spec, n); ok { skip } // else why says
//	w, err := h5.Create(path, spec, n)        // resumes a leftover, if any
//	defer w.Close()
//	for i in w.Remaining(), on all cores: gen.Generate(seed, i, bufs); w.Write(i, bufs)
//	w.Commit()
//
// What the protocol guarantees:
//
//   - Trajectory i is written (hyperslab [i, ...]) as soon as it exists, so
//     memory holds one trajectory per worker. `Write` is safe from several
//     goroutines (calls are serialised: HDF5 has one global lock anyway).
//   - The file is written as `<path>.tmp-<pid>`. `Commit` requires every
//     trajectory, sets `complete` = 1, closes, fsyncs and renames to `<path>`,
//     then fsyncs the directory. So `<path>` exists only when complete;
//     `Open` refuses a uhno file without `complete` (a temporary file copied by
//     hand), naming how many trajectories it holds.
//   - Each `Write` flushes the data, then records the trajectory's CRC and its
//     `uhno-written` flag and flushes again. After an interruption (Ctrl-C,
//     SIGKILL, power loss) the next `Create` for the same path resumes the
//     leftover temporary file if its `uhno-spec` matches, keeps the
//     trajectories whose CRC verifies and rewrites the rest; a leftover that
//     does not open, was written with other settings, or is garbage is deleted.
//     The test `TestWriterKilled` SIGKILLs a writing child process and resumes
//     its file.
//   - `<path>.lock` (flock) keeps two processes off one path; the kernel drops
//     the lock when its holder dies, so a crash never blocks the next run.
//   - Values that are NaN or Inf are refused at `Write`, naming the trajectory.
//
// # Speed
//
// Measured on this 2-core machine (`go test -bench . ./internal/data/`,
// random values, the worst case for gzip): writing one 2D trajectory takes
// 37 ms (9 ms of it without compression), reading the 20 frames a 2D
// trajectory contributes 7.5 ms, a normalised batch of 16 2D pairs from
// memory 0.7 ms. Writing the 2D tasks' 1,000 trajectories thus adds about
// 40 s per task, serialised in the writer.
package h5
