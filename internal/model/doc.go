// Package model holds uhno's neural operators: the U-shaped Hybrid Neural
// Operator (U-HNO, paper Sec. 3) with its ablation modes A–I (Tab.
// ablation-setup) and the FNO baseline (App. C "Baseline Configurations"),
// for 1D, 2D and 3D fields.
//
// # API
//
//	s, err := model.SpecFromConfig(cfg, in, out)   // model.* and spar.* keys
//	s, err  = model.UHNOForBudget(s, 620000)       // optional: --params 0.62M
//	m, err := model.NewUHNO(backend, s, seed)      // or NewFNO(backend, FNOSpecFor(s, w), seed)
//	y, aux := m.Forward(tape, x)                   // x [B, In, spatial...] -> y [B, Out, spatial...]
//	p := m.Params()                                // flat buffers + named views
//
// NewUHNO and NewFNO return the concrete *UHNO and *FNO, which implement
// Model; so do NewAdditive's *Additive (AdditiveSpecFor,
// AdditiveForBudget, CountAdditive) and NewWNO's *WNO (WNOSpecFor, whose
// Grid the caller sets to the task's grid, WNOForBudget, CountWNO). CountUHNO and CountFNO give the
// AdditiveForBudget, CountAdditive), NewConvFNO's *ConvFNO (ConvFNOSpecFor,
// ConvFNOForBudget, CountConvFNO) and NewCNO's *CNO (CNOSpecFor,
// CNOForBudget, CountCNO). CountUHNO and CountFNO give the
// Model; so does NewAdditive's *Additive (AdditiveSpecFor,
// AdditiveForBudget, CountAdditive), NewFFNO's *FFNO and NewLogLoFNO's
// *LogLoFNO (an alias of *FNO: FNO with FNOSpec.Frequencies = "log", the
// last-axis frequencies tensor.LogModes instead of 0..K-1; issue 21)
// (the F-FNO and LogLo-FNO baselines in the paper's reading,
// with XSpecFor, XForBudget and CountX); FNOWiderSpec is the FNO-wider
// preset of Tab. fno-wider; NewGNO's *GNO is the graph kernel network
// (GNOSpecFor, GNOForBudget, CountGNO; its parameters are in its type
// comment). CountUHNO and CountFNO give the
// parameter count of a spec without allocating; WidthForBudget, UHNOForBudget and FNOForBudget choose widths
// for a parameter target (FNO is matched to U-HNO within 10%, App. C).
// Model.Mode exposes the ablation mode so that the loss can drop its terms
// for modes C, D and E, which build the Full network.
//
// # Parameters
//
// A model's parameters live in one flat data buffer and one flat gradient
// buffer (llm.c's layout); each parameter is a named leaf tensor whose Data
// and Grad are views into them, contiguous in the fixed order of
// Params.List. That order is the order the layers are declared, which is
// forward order:
//
//	lift.{w,b}
//	enc.l.*, down.l.{w,b}        l = 0..L-1
//	mid.*
//	dec.l.w_up.{w,b}, dec.l.*    l = L-1..0
//	proj.0.{w,b}, proj.1.{w,b}
//
// where a stage's "*" is, in order (absent parts skipped by the mode):
//
//	fourier.w                    [2^(d-1), C, C, K0 (d times), 2]  (mode B: none)
//	gauss.pre.{w,b}              [M*C, C], [M*C]                    (mode A: no gauss.*)
//	gauss.log_sigma              [M, G]
//	gauss.post.m.{w,b}           [C, C], [C]                        m = 0..M-1
//	gauss.fuse.{w,b}             [C, M*C], [C]
//	spar.w1.{w,b}, spar.w2.{w,b} [C, 2C], [C], [1, C], [1]          (modes A, B, F: none; model.spar_stages: the routed stages)
//	fuse.w_o.{w,b}               [C, 2C], [C]                       (mode F; model.spar_stages: the other stages)
//	w_r.{w,b}                    [C, C], [C]
//
// Mode G has lift, flat.i.* (i = 0..FlatBlocks-1) and proj; FNO has lift,
// block.i.spectral.w, block.i.w.{w,b} (i = 0..Blocks-1) and proj; the flat
// additive hybrid (Additive, the baseline of the paper's gradient-angle
// diagnostic) has lift, fourier.i.spectral.w, fourier.i.w.{w,b},
// local.i.depthwise.{w,b} (depthwise kernels [C, 3, ..., 3]),
// local.i.w.{w,b} and proj; WNO has lift, block.i.wavelet.w (the learned
// transform of the level-J wavelet subbands, [W, W, 2N_0/2^J, ...]),
// block.i.w.{w,b} and proj. A 1x1 weight is [Cout, Cin] (PyTorch's Conv
// local.i.w.{w,b} and proj; Conv-FNO and CNO list theirs in their type
// comments (3^d convolutions [Cout, Cin, 3, ..., 3] with bias). A 1x1 weight is [Cout, Cin] (PyTorch's Conv
// local.i.w.{w,b} and proj; F-FNO has FNO's with block.i.spectral.u
// [2^(d-1), C, r, K0..., 2] and block.i.spectral.v [2^(d-1), r, C, K0...,
// 2] in place of block.i.spectral.w; LogLo-FNO has exactly FNO's. A 1x1 weight is [Cout, Cin] (PyTorch's Conv
// weight without its unit kernel axes); down.l.w is
// [C_{l+1}, C_l, 3, ..., 3] as in PyTorch. Every 1x1, stride-2 and
// depthwise convolution has a bias (PyTorch's Conv default); the spectral
// and wavelet weights and log sigma have none.
//
// # Initialisation
//
// PyTorch's defaults, drawn in List order from one PCG generator seeded by
// the caller: convolution weights and biases U(-1/sqrt(fan_in),
// 1/sqrt(fan_in)) with fan_in = Cin * (kernel volume); spectral weights
// (1/(Cin Cout)) U(0, 1) as in the FNO code; log sigma = log Spec.Sigmas
// for every group. The same seed gives bit-identical parameters and, on
// the CPU backend, bit-identical outputs for any thread count.
//
// # Computation
//
// Layers compute only through tensor.Tape operations, so every model runs
// on any backend and gets its gradients from the tape. See the type
// comments for the equations: UHNO (backbone), block and decStage (Eq.
// block, Eq. dec-asym), fourierBranch, gaussianBranch (Eq.
// gaussian-kernel), sparGate (Eq. spar-score, spar-rho), FNO.
// docs/DESIGN.md "Model" records the readings of the paper and the
// parameter counts.
package model
