// Package predict applies a trained operator to initial conditions that
// are not part of any run's data: uhno predict's work, without the
// command line.
//
// # Input
//
// Run reads a batch of trajectories' first frames from an HDF5 file in
// one of the layouts package data reads (uhno's own files and PDEBench's
// 1D, 2D and 3D ones, through data.Open: no second HDF5 reader) or from a
// NumPy .npy file (little-endian float32 or float64, C order; its header
// is parsed by codeberg.org/sbinet/npyio). An .npy array is
//
//	[n, spatial...]                one field, no time axis (history 1)
//	[n, frames, spatial...]        one field
//	[n, spatial..., C]             C > 1 fields, channels last (history 1)
//	[n, frames, spatial..., C]     C fields
//
// where spatial has the run's number of axes and C is the run's number of
// fields. The first H frames of each trajectory (H = the run's
// data.history) are the initial condition; later frames are read only as
// a reference (Options.Reference). The grid may differ from the training
// grid where the model takes it (model.Model.CheckGrid): the Fourier
// models keep min(K0, N/2) modes on any grid, U-HNO and CNO need every
// axis divisible by 2^L, Conv-FNO by 2^(levels-1), WNO only the training
// grid scaled by a power of two (its wavelet levels are tied to the
// training grid). Every check fails with one line naming the file, the
// dataset, what was found and what the run expects; a NaN or Inf in the
// frames read is refused, naming its index.
//
// # Rollout
//
// The frames are normalised with the run's statistics and rolled out by
// eval.Stepper, the code path of uhno eval's rollout, so a prediction from
// a test trajectory's first frames is eval's rollout bit for bit on the
// CPU; the prediction is de-normalised to physical units.
//
// # Output
//
// Trajectory k of the output holds steps+1 frames: frame 0 is the input's
// last frame (frame H-1), frames 1..steps the prediction. By the output's
// extension it is written as .npy, [n, steps+1, spatial...] (one field) or
// [n, steps+1, spatial..., C], float32, or as HDF5 in PDEBench's layout:
// one dataset per field named as the run's data name it ("tensor" for one
// field; density, pressure, Vx, Vy, Vz for 3D CFD), [n, steps+1,
// spatial...], with x-/y-/z-coordinate (the input's when it has them,
// otherwise j L/N on the task's domain) and t-coordinate (the input's time
// of frame H-1, then the run's snapshot interval), written by h5.Writer.
//
// Trajectories are processed Batch at a time, so memory holds one batch
// whatever the file's size, and the output is written as they finish to a
// temporary file in the output's folder that is renamed to the output path
// only when complete: a cancelled or failed run leaves nothing at the
// output path and removes its temporary file.
package predict
