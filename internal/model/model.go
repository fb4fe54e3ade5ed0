package model

import (
	"fmt"
	"slices"
	"strings"

	"uhno/internal/config"
	"uhno/internal/tensor"
)

// Model is a neural operator G_theta mapping an input field to an output
// field on the same grid (paper Sec. 3 "Setup").
type Model interface {
	// Forward evaluates the model on x [B, InChannels, spatial...] and
	// returns the prediction [B, OutChannels, spatial...] with the
	// diagnostics the loss and the logs need. Every tensor it returns is
	// owned by tp and valid until tp.Reset. Forward panics ("model: ...")
	// when x does not fit the model (wrong rank or channels, a grid that
	// cannot be halved L times); call CheckGrid first to get an error
	// instead.
	Forward(tp *tensor.Tape, x *tensor.Tensor) (*tensor.Tensor, Aux)
	// Params are the model's parameters: one flat data buffer and one flat
	// gradient buffer with named views (see Params).
	Params() *Params
	// Name is "uhno" for the full model, "uhno-A" ... "uhno-I" for the
	// ablation modes of Tab. ablation-setup, and "fno" for the baseline.
	Name() string
	// Mode is the ablation mode: ModeFull, "A" ... "I" for U-HNO, and ""
	// for FNO. Modes C, D and E build the Full network; only the loss
	// reads them (lambda_CBC = 0, lambda_H1 = 0, both).
	Mode() string
	// CheckGrid reports whether the model can run on a grid with these
	// spatial axes (U-HNO halves each axis L times; FNO takes any grid of
	// at least two points per axis).
	CheckGrid(grid []int) error
}

// Aux holds what diagnostics and the loss need besides the prediction.
// Slices are parallel and in forward order: the encoder levels 0..L-1, the
// bottleneck, then the decoder levels L-1..0 (mode G: the flat blocks).
type Aux struct {
	// ZF and ZG are the branch features z_F and z_G at the final routing
	// stage L* (the last decoder stage; mode G: the last flat block), for
	// the CBC term lambda_CBC MSE(z_G, z_F) of Eq. loss. In the decoder z_F
	// includes W_R h~ (Eq. dec-asym), except with model.decoder_residual:
	// outside, where it is B_F(h~). Both are nil when a branch is ablated
	// (modes A and B) and for FNO.
	ZF, ZG *tensor.Tensor
	// Stages names each routing stage: "enc.0", ..., "mid", "dec.L-1", ...,
	// "dec.0" (mode G: "flat.0", ...). Empty when nothing is routed.
	Stages []string
	// Masks is the hard routing mask g_hard [B, 1, spatial...] per stage
	// (1 = Fourier, 0 = Gaussian). Empty for FNO and for modes A, B and F,
	// which have no SPAR gate.
	Masks []*tensor.Tensor
	// Stats is [B, 3] = (contrast c, keep-ratio rho, k) per stage, from
	// tensor.Tape.SPARKeep (Eq. spar-rho). Same length as Masks.
	Stats []*tensor.Tensor
}

// Ablation modes (paper Tab. ablation-setup).
const (
	ModeFull = "full"
	// ModeNoLocal (A) removes the multi-scale Gaussian branch: r = z_F.
	ModeNoLocal = "A"
	// ModeNoGlobal (B) removes the Fourier branch: r = z_G.
	ModeNoGlobal = "B"
	// ModeNoCBC (C) sets lambda_CBC = 0 (loss only).
	ModeNoCBC = "C"
	// ModeNoH1 (D) sets lambda_H1 = 0 (loss only).
	ModeNoH1 = "D"
	// ModeMSE (E) sets lambda_H1 = lambda_CBC = 0 (loss only).
	ModeMSE = "E"
	// ModeNoSPAR (F) replaces the MUX with r = W_o [z_F; z_G].
	ModeNoSPAR = "F"
	// ModeNoUShape (G) is a flat stack of U-HNO blocks at input resolution.
	ModeNoUShape = "G"
	// ModeSymDec (H) feeds the up-sampled features to both decoder
	// branches: z_G = B_G(h~).
	ModeSymDec = "H"
	// ModeNoNorm (I) drops the Gaussian kernel normalisation.
	ModeNoNorm = "I"
)

// Spec is the architecture of a U-HNO (paper Sec. 3, Tab. per-task-hp).
// SpecFromConfig fills it from a task configuration.
type Spec struct {
	// Dim is the number of spatial axes (1, 2 or 3).
	Dim int
	// InChannels and OutChannels are the input and output fields' channels.
	InChannels, OutChannels int
	// Levels is the number of U levels L; the grid is halved L times.
	Levels int
	// C0 is the width at the finest level; level l has C0 * WidthMult^l
	// channels (Sec. 3.2 uses WidthMult = 2).
	C0, WidthMult int
	// K0 is the nominal number of Fourier modes per axis; level l keeps
	// K_eff = min(K0, floor(N_l/2)) (Eq. mode-cap).
	K0 int
	// M is the number of Gaussian scales, Sigmas their initial widths in
	// grid cells (Sec. 3.2: {0.5, 1.0, 2.5}), Groups the number of channel
	// groups with their own sigma (App. C "Multi-scale Gaussian Branch").
	M      int
	Sigmas []float64
	Groups int
	// MaxRadius caps the Gaussian support radius ceil(3 sigma) in cells.
	MaxRadius int
	// ProjHidden is the hidden width of the projection 1x1 -> GELU -> 1x1.
	ProjHidden int
	// Mode is ModeFull or one of "A" ... "I" (Tab. ablation-setup).
	Mode string
	// SPAR holds the keep-ratio constants and temperature (Eq. spar-rho).
	SPAR tensor.SPARParams
	// FlatWidth and FlatBlocks shape mode G (NoUShape): FlatBlocks blocks of
	// width FlatWidth at input resolution. Zero means automatic: 2L+1 blocks
	// (as many as the U-shape has stages) and the multiple of Groups whose
	// parameter count is closest to the Full model's (ResolveFlat).
	FlatWidth, FlatBlocks int

	// The open readings of the paper as switches (issue 20; docs/DECISIONS.md
	// D-decoder-residual, D-spar-surrogate, D-upsample-boundary, D-spar-stages). Each is a string whose zero
	// value "" is the reading uhno always had, and is omitted from JSON:
	// a build record written before the switches decodes to the default,
	// and a default spec encodes to the same bytes as before.
	// SpecFromConfig stores the default's name as "".

	// DecoderResidual is model.decoder_residual: where the decoder stage
	// adds W_R h~, DecoderInside ("", Eq. dec-asym) or DecoderOutside
	// (Eq. block). See decStage.
	DecoderResidual string `json:",omitempty"`
	// SurrogateCentre is spar.surrogate_centre: CentreZero ("",
	// g_soft = sigmoid(s/T)) or CentreThreshold (sigmoid((s - tau_k)/T)).
	// See sparGate.
	SurrogateCentre string `json:",omitempty"`
	// Upsample is model.upsample: the decoder's Upsample2x clamps at the
	// edges (UpsampleClamp, "") or wraps around them (UpsamplePeriodic,
	// periodic tasks only).
	Upsample string `json:",omitempty"`
	// SPARStages is model.spar_stages: which stages route with SPAR,
	// SPARAll ("", the paper), SPAREncoder (encoder blocks and
	// bottleneck; the decoder stages fuse with mode F's W_o [z_F; z_G]) or
	// SPARDecoder (the decoder stages; the others fuse with W_o). Only
	// for the modes that have a gate, except G.
	SPARStages string `json:",omitempty"`
}

// Values of the switches of issue 20 (Spec.DecoderResidual,
// SurrogateCentre, Upsample, SPARStages); the first of each pair or
// triple is the default.
const (
	DecoderInside  = "inside"
	DecoderOutside = "outside"

	CentreZero      = "zero"
	CentreThreshold = "threshold"

	UpsampleClamp    = "clamp"
	UpsamplePeriodic = "periodic"

	SPARAll     = "all"
	SPAREncoder = "encoder"
	SPARDecoder = "decoder"
)

// validSwitch reports whether v is "" or one of the allowed values.
func validSwitch(v string, allowed ...string) bool {
	return v == "" || slices.Contains(allowed, v)
}

// defaultAsEmpty returns "" for a switch's default value (the first
// allowed), else v: the form a Spec stores.
func defaultAsEmpty(v, def string) string {
	if v == def {
		return ""
	}
	return v
}

// surrogateCentre is the tensor form of SurrogateCentre.
func (s Spec) surrogateCentre() tensor.SurrogateCentre {
	if s.SurrogateCentre == CentreThreshold {
		return tensor.CentreThreshold
	}
	return tensor.CentreZero
}

// hasGate reports whether the mode routes with SPAR (all but A, B, F).
func hasGate(mode string) bool {
	return mode != ModeNoLocal && mode != ModeNoGlobal && mode != ModeNoSPAR
}

// FNOSpec is the architecture of the FNO baseline (paper App. C "Baseline
// Configurations", li2020fourier).
type FNOSpec struct {
	// Dim is the number of spatial axes (1, 2 or 3).
	Dim int
	// InChannels and OutChannels are the input and output fields' channels.
	InChannels, OutChannels int
	// Width is the channel width of every spectral block.
	Width int
	// K0 is the nominal number of Fourier modes per axis (the same as
	// U-HNO's), capped at min(K0, floor(N/2)).
	K0 int
	// Blocks is the number of spectral blocks (4 in the paper).
	Blocks int
	// ProjHidden is the hidden width of the projection 1x1 -> GELU -> 1x1.
	ProjHidden int
	// Frequencies chooses the frequencies every spectral convolution keeps
	// on the last (rfft) axis of a grid: FrequenciesFirst ("", FNO's
	// 0..K-1, omitted from the build record, so older records read as
	// before) or FrequenciesLog (LogLo-FNO's tensor.LogModes).
	Frequencies string `json:",omitempty"`
}

// The last-axis frequency rules of FNOSpec.Frequencies.
const (
	// FrequenciesFirst keeps 0..K-1, K = min(K0, N/2) (Eq. mode-cap;
	// tensor.FirstModes): FNO, li2020fourier.
	FrequenciesFirst = ""
	// FrequenciesLog keeps tensor.LogModes(K0, N), the budget allocated by
	// 1/log(1+k) across the rfft axis: LogLo-FNO (App. "Baseline
	// Configurations").
	FrequenciesLog = "log"
)

// Channels returns C_l = C0 * WidthMult^l for l = 0..L.
func (s Spec) Channels() []int {
	ch := make([]int, s.Levels+1)
	c := s.C0
	for l := range ch {
		ch[l] = c
		c *= s.WidthMult
	}
	return ch
}

// Validate reports the first inconsistency in s.
func (s Spec) Validate() error {
	if err := s.validate(); err != nil {
		return fmt.Errorf("model: %w", err)
	}
	return nil
}

func (s Spec) validate() error {
	switch {
	case s.Dim < 1 || s.Dim > 3:
		return fmt.Errorf("dim %d, want 1, 2 or 3", s.Dim)
	case s.InChannels < 1 || s.OutChannels < 1:
		return fmt.Errorf("%d input and %d output channels, want >= 1", s.InChannels, s.OutChannels)
	case !slices.Contains(Modes(), s.Mode):
		return fmt.Errorf("mode %q, want one of %s", s.Mode, strings.Join(Modes(), ", "))
	case s.Levels < 1 || s.Levels > 10:
		return fmt.Errorf("%d levels, want 1..10", s.Levels)
	case s.C0 < 1 || s.WidthMult < 1:
		return fmt.Errorf("c0 %d and width multiplier %d, want >= 1", s.C0, s.WidthMult)
	case s.K0 < 1:
		return fmt.Errorf("k0 %d, want >= 1", s.K0)
	case s.M < 1 || len(s.Sigmas) != s.M:
		return fmt.Errorf("%d Gaussian scales with %d initial sigmas, want M >= 1 and one sigma per scale", s.M, len(s.Sigmas))
	case s.Groups < 1 || s.C0%s.Groups != 0:
		return fmt.Errorf("%d sigma groups do not divide c0 = %d", s.Groups, s.C0)
	case s.MaxRadius < 1:
		return fmt.Errorf("max radius %d, want >= 1", s.MaxRadius)
	case s.ProjHidden < 1:
		return fmt.Errorf("projection width %d, want >= 1", s.ProjHidden)
	case s.SPAR.Temperature <= 0:
		return fmt.Errorf("SPAR temperature %g, want > 0", s.SPAR.Temperature)
	case s.FlatWidth < 0 || s.FlatBlocks < 0:
		return fmt.Errorf("flat width %d and blocks %d, want >= 0", s.FlatWidth, s.FlatBlocks)
	case s.FlatWidth%s.Groups != 0:
		return fmt.Errorf("flat width %d is not a multiple of the %d sigma groups", s.FlatWidth, s.Groups)
	case !validSwitch(s.DecoderResidual, DecoderInside, DecoderOutside):
		return fmt.Errorf("decoder residual %q, want %s or %s", s.DecoderResidual, DecoderInside, DecoderOutside)
	case !validSwitch(s.SurrogateCentre, CentreZero, CentreThreshold):
		return fmt.Errorf("surrogate centre %q, want %s or %s", s.SurrogateCentre, CentreZero, CentreThreshold)
	case !validSwitch(s.Upsample, UpsampleClamp, UpsamplePeriodic):
		return fmt.Errorf("upsample %q, want %s or %s", s.Upsample, UpsampleClamp, UpsamplePeriodic)
	case !validSwitch(s.SPARStages, SPARAll, SPAREncoder, SPARDecoder):
		return fmt.Errorf("SPAR stages %q, want %s, %s or %s", s.SPARStages, SPARAll, SPAREncoder, SPARDecoder)
	case s.SPARStages != "" && s.SPARStages != SPARAll && (!hasGate(s.Mode) || s.Mode == ModeNoUShape):
		return fmt.Errorf("SPAR stages %s with mode %s: only the modes that route with SPAR at every stage of a U (full, C, D, E, H, I) can take SPAR away from some", s.SPARStages, s.Mode)
	}
	for _, sg := range s.Sigmas {
		if !(sg > 0) {
			return fmt.Errorf("initial sigmas %v, want positive widths", s.Sigmas)
		}
	}
	return nil
}

// Validate reports the first inconsistency in s.
func (s FNOSpec) Validate() error {
	switch {
	case s.Dim < 1 || s.Dim > 3:
		return fmt.Errorf("model: fno dim %d, want 1, 2 or 3", s.Dim)
	case s.InChannels < 1 || s.OutChannels < 1:
		return fmt.Errorf("model: fno %d input and %d output channels, want >= 1", s.InChannels, s.OutChannels)
	case s.Width < 1 || s.K0 < 1 || s.Blocks < 1 || s.ProjHidden < 1:
		return fmt.Errorf("model: fno width %d, k0 %d, blocks %d, projection %d, want all >= 1", s.Width, s.K0, s.Blocks, s.ProjHidden)
	case s.Frequencies != FrequenciesFirst && s.Frequencies != FrequenciesLog:
		return fmt.Errorf("model: fno frequencies %q, want %q (0..K-1) or %q", s.Frequencies, FrequenciesFirst, FrequenciesLog)
	}
	return nil
}

// SpecFromConfig maps a task configuration's model.* and spar.* keys to a
// Spec with the given input and output channels (which come from the data:
// history x input fields, and output fields).
func SpecFromConfig(c config.Config, in, out int) (Spec, error) {
	m := c.Model
	s := Spec{
		Dim: c.Dim, InChannels: in, OutChannels: out,
		Levels: m.Levels, C0: m.C0, WidthMult: m.WidthMult, K0: m.K0,
		M: m.M, Sigmas: slices.Clone(m.Sigmas), Groups: m.Groups, MaxRadius: m.MaxRadius,
		ProjHidden: m.ProjHidden, Mode: m.Ablation,
		DecoderResidual: defaultAsEmpty(m.DecoderResidual, DecoderInside),
		SurrogateCentre: defaultAsEmpty(c.SPAR.SurrogateCentre, CentreZero),
		Upsample:        defaultAsEmpty(m.Upsample, UpsampleClamp),
		SPARStages:      defaultAsEmpty(m.SPARStages, SPARAll),
		SPAR: tensor.SPARParams{
			Rho0: c.SPAR.Rho0, Beta: c.SPAR.Beta, RhoMin: c.SPAR.RhoMin, RhoMax: c.SPAR.RhoMax,
			Temperature: c.SPAR.Temperature, Eps: c.SPAR.Eps, UnbiasedStd: c.SPAR.UnbiasedStd,
		},
	}
	if s.validate() != nil {
		return Spec{}, fmt.Errorf("model: task %s: %w", c.Task, s.validate())
	}
	return s, nil
}

// FNOSpecFor returns the FNO baseline for the same task as a U-HNO spec:
// same dimension, channels, K0 and projection, four blocks (App. C
// "Baseline Configurations"), with the given width (see FNOForBudget to
// match U-HNO's parameter count).
func FNOSpecFor(s Spec, width int) FNOSpec {
	return FNOSpec{Dim: s.Dim, InChannels: s.InChannels, OutChannels: s.OutChannels,
		Width: width, K0: s.K0, Blocks: 4, ProjHidden: s.ProjHidden}
}
