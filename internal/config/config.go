package config

// Config is the full configuration of one training or evaluation run of one
// task. The yaml tag of each field is its key (sections joined with dots, as
// in "optim.lr"); the json tag carries the same name so that `uhno config
// --json` prints the same keys. Fields tagged omitempty exist only for some
// tasks (the task's spec in Tasks says which).
type Config struct {
	// Task names the benchmark: one of TaskNames().
	Task string `yaml:"task" json:"task"`
	// Dim is the number of spatial dimensions; it must match the task.
	Dim int `yaml:"dim" json:"dim"`
	// Seed fixes the parameter initialisation and the order of the
	// training batches (the paper reports seed 0, App. C
	// "Reproducibility"). The data have a seed of their own, Data.Seed, so
	// runs of several seeds train on the same data and are evaluated on
	// the same test split.
	Seed int64 `yaml:"seed" json:"seed"`

	PDE   PDE   `yaml:"pde" json:"pde"`
	Data  Data  `yaml:"data" json:"data"`
	Model Model `yaml:"model" json:"model"`
	Loss  Loss  `yaml:"loss" json:"loss"`
	SPAR  SPAR  `yaml:"spar" json:"spar"`
	Optim Optim `yaml:"optim" json:"optim"`
}

// PDE describes the equation, its domain and, for self-generated data, the
// solver and the initial-condition distribution (paper App. B). Only the
// fields the task uses may be non-zero; Validate enforces this.
type PDE struct {
	// Domain is the side length of the periodic (or Dirichlet) box per axis.
	Domain []float64 `yaml:"domain,flow" json:"domain"`
	// Grid is the resolution the model sees, per axis.
	Grid []int `yaml:"grid,flow" json:"grid"`
	// SolverGrid is the resolution the data generator solves on before
	// subsampling to Grid (a multiple of Grid per axis); empty means Grid.
	SolverGrid []int `yaml:"solver_grid,omitempty,flow" json:"solver_grid,omitempty"`
	// Boundary is "periodic" or "dirichlet": not periodic, so derivatives
	// (H1 loss, metrics) are one-sided at the ends and GNO's graph does
	// not wrap; a user's file with walls or open ends on any axis gets it
	// from uhno datagen --from.
	Boundary string `yaml:"boundary" json:"boundary"`

	// Nu is the viscosity (Burgers, 2D Navier–Stokes).
	Nu float64 `yaml:"nu,omitempty" json:"nu,omitempty"`
	// Eps is the Allen–Cahn interface parameter epsilon.
	Eps float64 `yaml:"eps,omitempty" json:"eps,omitempty"`
	// Velocity is the constant advection velocity c, one entry per axis.
	Velocity []float64 `yaml:"velocity,omitempty,flow" json:"velocity,omitempty"`
	// VelocityRange [min, max] draws each component of the advection
	// velocity uniformly per trajectory (the issue's "random c per
	// trajectory"); it replaces a fixed Velocity.
	VelocityRange []float64 `yaml:"velocity_range,omitempty,flow" json:"velocity_range,omitempty"`
	// Forcing is the amplitude A of the Navier–Stokes forcing
	// A(sin 2pi(x+y) + cos 2pi(x+y)), or the constant Darcy source f.
	Forcing float64 `yaml:"forcing,omitempty" json:"forcing,omitempty"`
	// Mach, Eta, Zeta and Gamma are the compressible Navier–Stokes Mach
	// number, shear and bulk viscosities and adiabatic index (3D CFD).
	Mach  float64 `yaml:"mach,omitempty" json:"mach,omitempty"`
	Eta   float64 `yaml:"eta,omitempty" json:"eta,omitempty"`
	Zeta  float64 `yaml:"zeta,omitempty" json:"zeta,omitempty"`
	Gamma float64 `yaml:"gamma,omitempty" json:"gamma,omitempty"`

	// Dt is the solver's fine time step (not the snapshot interval).
	Dt float64 `yaml:"dt,omitempty" json:"dt,omitempty"`
	// TEnd is the physical time spanned by the stored snapshots: snapshot k
	// of S is at TBurn + k*TEnd/(S-1), k = 0..S-1.
	TEnd float64 `yaml:"t_end,omitempty" json:"t_end,omitempty"`
	// TBurn is the time simulated and discarded before the first snapshot
	// (Kuramoto–Sivashinsky, to reach the chaotic attractor).
	TBurn float64 `yaml:"t_burn,omitempty" json:"t_burn,omitempty"`

	// IC is the initial-condition distribution of self-generated data.
	IC IC `yaml:"ic,omitempty" json:"ic,omitzero"`
}

// IC is a Gaussian random field N(0, C) on the domain rescaled to the unit
// box: Fourier mode k (integer wavenumbers) has standard deviation
// Sigma * (4 pi^2 |k|^2 + Tau^2)^(-Alpha/2), and the mean mode is zero. This
// is the convention of the FNO benchmarks' GaussianRF, which the paper cites
// for its N(0, 7^{3/2}(-Delta + 49 I)^{-2.5}) fields (App. B).
type IC struct {
	// Kind is the distribution; "grf" is the only one the paper uses.
	Kind  string  `yaml:"kind,omitempty" json:"kind,omitempty"`
	Alpha float64 `yaml:"alpha,omitempty" json:"alpha,omitempty"`
	Tau   float64 `yaml:"tau,omitempty" json:"tau,omitempty"`
	Sigma float64 `yaml:"sigma,omitempty" json:"sigma,omitempty"`
}

// Data describes the dataset: where it comes from, the splits and the
// time windows (paper Tab. dataset-config).
type Data struct {
	// Source is "generated" (uhno's own solvers) or "pdebench" (a PDEBench
	// HDF5 file).
	Source string `yaml:"source" json:"source"`
	// Seed fixes the data: the initial conditions of generated
	// trajectories (it is part of the data file's name), the train/test
	// split and the validation pairs. A run's own seed (Config.Seed) does
	// not change them. State files written before this key existed used
	// the run's seed for both (train.LoadCheckpoint restores that).
	Seed int64 `yaml:"seed" json:"seed"`
	// File is the PDEBench file name, for Source "pdebench".
	File string `yaml:"file,omitempty" json:"file,omitempty"`
	// SourceGrid is the resolution stored in File; Grid must divide it.
	SourceGrid []int `yaml:"source_grid,omitempty,flow" json:"source_grid,omitempty"`
	// Inputs and Outputs name the fields the model reads and predicts, in
	// channel order.
	Inputs  []string `yaml:"inputs,flow" json:"inputs"`
	Outputs []string `yaml:"outputs,flow" json:"outputs"`
	// TrainTrajectories and TestTrajectories are the split sizes.
	TrainTrajectories int `yaml:"train_trajectories" json:"train_trajectories"`
	TestTrajectories  int `yaml:"test_trajectories" json:"test_trajectories"`
	// Snapshots is the number of stored time frames per trajectory (1 for a
	// static task).
	Snapshots int `yaml:"snapshots" json:"snapshots"`
	// History is the number of consecutive frames fed to the model.
	History int `yaml:"history" json:"history"`
	// PairsPerTrajectory is the number of training input/target pairs taken
	// from each trajectory.
	PairsPerTrajectory int `yaml:"pairs_per_trajectory" json:"pairs_per_trajectory"`
	// Rollout is the number of autoregressive steps evaluated at test time.
	Rollout int `yaml:"rollout" json:"rollout"`
	// Coordinates appends one input channel per grid axis holding the
	// point's coordinate, linspace(0, 1, N) along that axis (the FNO
	// reference code's (a, x, y) input), after the fields (on a rolled-out
	// task, after the history frames, the same at every step: a task with
	// walls). Without it every model here is equivariant to cyclic shifts of
	// its input (periodic FFTs, circular padding), so on a Dirichlet
	// problem it cannot tell where the walls are (docs/DECISIONS.md,
	// D-coordinate-channels).
	Coordinates bool `yaml:"coordinates,omitempty" json:"coordinates,omitempty"`
	// Constants name time-independent inputs of a user's file (a
	// coefficient field, a parameter per trajectory: The Well's fields
	// without a time axis and its scalars), each one input channel after
	// the history frames, normalised like a field, the same at every
	// rollout step. uhno datagen --from lists every one that differs
	// between trajectories or is a field; only a described task has them.
	Constants []string `yaml:"constants,omitempty,flow" json:"constants,omitempty"`
}

// Model holds the U-HNO architecture (paper Sec. 3, Tab. per-task-hp).
type Model struct {
	// Ablation is "full" or one of the modes A–I of Tab. ablation-setup.
	Ablation string `yaml:"ablation" json:"ablation"`
	// Levels is the number of U levels L.
	Levels int `yaml:"levels" json:"levels"`
	// C0 is the width at the finest level.
	C0 int `yaml:"c0" json:"c0"`
	// WidthMult is the channel growth per level: C_l = C0 * WidthMult^l.
	WidthMult int `yaml:"width_mult" json:"width_mult"`
	// K0 is the nominal number of retained Fourier modes per axis.
	K0 int `yaml:"k0" json:"k0"`
	// M is the number of Gaussian scales in the local branch.
	M int `yaml:"m" json:"m"`
	// Sigmas are the initial Gaussian widths, one per scale (in grid cells).
	Sigmas []float64 `yaml:"sigmas,flow" json:"sigmas"`
	// Groups is the number of channel groups that share one learned sigma.
	Groups int `yaml:"groups" json:"groups"`
	// MaxRadius caps the Gaussian support radius ceil(3 sigma), in cells.
	MaxRadius int `yaml:"max_radius" json:"max_radius"`
	// ProjHidden is the hidden width of the 1x1 -> GELU -> 1x1 projection.
	ProjHidden int `yaml:"proj_hidden" json:"proj_hidden"`

	// The paper's open readings as switches (issue 20); the first value of
	// each is the default, the reading uhno always had. An empty value
	// (a configuration written before the switches, such as an older
	// checkpoint's) means the default.

	// DecoderResidual is where the decoder stage adds its residual W_R h~:
	// "inside" z_F (Eq. dec-asym) or "outside" the fusion (Eq. block).
	DecoderResidual string `yaml:"decoder_residual" json:"decoder_residual"`
	// Upsample is the decoder's up-sampling at the boundary: "clamp"
	// (PyTorch's align_corners=false) or "periodic" (wrap-around; periodic
	// tasks only).
	Upsample string `yaml:"upsample" json:"upsample"`
	// SPARStages is where SPAR routes: "all" stages (the paper), the
	// "encoder" blocks and bottleneck only, or the "decoder" stages only;
	// the other stages fuse with mode F's W_o [z_F; z_G].
	SPARStages string `yaml:"spar_stages" json:"spar_stages"`
}

// Loss holds the weights of the H1 and cross-branch consistency terms of the
// training objective (paper Eq. loss, Tab. per-task-hp).
type Loss struct {
	LambdaH1  float64 `yaml:"lambda_h1" json:"lambda_h1"`
	LambdaCBC float64 `yaml:"lambda_cbc" json:"lambda_cbc"`
}

// SPAR holds the sparse-point adaptive routing constants (paper Eq. spar-rho
// and App. C): rho = clip(Rho0 (1 + Beta tanh(c - 1)), RhoMin, RhoMax) with
// c = Std(s) / (mean|s| + Eps), and the soft gate sigmoid(s / Temperature).
type SPAR struct {
	Rho0        float64 `yaml:"rho0" json:"rho0"`
	Beta        float64 `yaml:"beta" json:"beta"`
	RhoMin      float64 `yaml:"rho_min" json:"rho_min"`
	RhoMax      float64 `yaml:"rho_max" json:"rho_max"`
	Temperature float64 `yaml:"temperature" json:"temperature"`
	Eps         float64 `yaml:"eps" json:"eps"`
	// UnbiasedStd selects the N-1 (true) or N (false) denominator of Std(s).
	UnbiasedStd bool `yaml:"unbiased_std" json:"unbiased_std"`
	// SurrogateCentre is where the straight-through surrogate is centred
	// (issue 20): "zero", g_soft = sigmoid(s/T) (Sec. 3.3), or
	// "threshold", sigmoid((s - tau_k)/T) at the k-th largest score. An
	// empty value means "zero".
	SurrogateCentre string `yaml:"surrogate_centre" json:"surrogate_centre"`
}

// Optim holds the optimizer and schedule (paper Sec. 4.1 "Implementation").
type Optim struct {
	// Name is the optimizer; the paper uses "adamw" only.
	Name string `yaml:"name" json:"name"`
	// LR is the peak learning rate.
	LR          float64 `yaml:"lr" json:"lr"`
	WeightDecay float64 `yaml:"weight_decay" json:"weight_decay"`
	// Betas are AdamW's two moment decay rates.
	Betas []float64 `yaml:"betas,flow" json:"betas"`
	// AdamEps is AdamW's denominator epsilon.
	AdamEps float64 `yaml:"adam_eps" json:"adam_eps"`
	// Steps is the number of optimizer steps.
	Steps int `yaml:"steps" json:"steps"`
	// Warmup is the number of linear warmup steps at the start of Steps.
	Warmup int `yaml:"warmup" json:"warmup"`
	// Schedule is the decay after warmup; "cosine" only.
	Schedule string `yaml:"schedule" json:"schedule"`
	// Batch is the number of samples per step.
	Batch int `yaml:"batch" json:"batch"`
}

// SaveInterval returns the physical time between stored snapshots,
// TEnd/(Snapshots-1), or 0 for a static task.
func (c *Config) SaveInterval() float64 {
	if c.Data.Snapshots < 2 {
		return 0
	}
	return c.PDE.TEnd / float64(c.Data.Snapshots-1)
}
