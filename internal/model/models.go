package model

import (
	"fmt"
	"slices"

	"uhno/internal/tensor"
)

// The registered models, in the order --model lists them. Each entry is
// the whole of what uhno needs to know about a model beyond its package
// file: how a fresh run sizes it (the baselines are matched to Full
// U-HNO's parameter count, App. "Baseline Configurations"), its
// constructor and its description.
func init() {
	Register("uhno", Builder[Spec, *UHNO]{Paper: "U-HNO", AllModes: true,
		Plan: func(p Plan) (Spec, error) { return p.UHNO, nil },
		New:  NewUHNO,
		Describe: func(_ Spec, m *UHNO) string {
			s := m.Spec()
			return fmt.Sprintf("%s (mode %s), L %d, C0 %d, K0 %d", m.Name(), s.Mode, s.Levels, s.C0, s.K0)
		}})
	Register("fno", Builder[FNOSpec, *FNO]{Paper: "FNO",
		Plan: func(p Plan) (FNOSpec, error) {
			s := FNOSpecFor(p.UHNO, p.Width)
			if p.Width != 0 {
				return s, nil
			}
			return FNOForBudget(s, CountUHNO(p.UHNO))
		},
		New: NewFNO,
		Describe: func(s FNOSpec, _ *FNO) string {
			return fmt.Sprintf("fno, width %d, %d blocks, K0 %d", s.Width, s.Blocks, s.K0)
		}})
	Register("additive", Builder[AdditiveSpec, *Additive]{
		Plan: func(p Plan) (AdditiveSpec, error) {
			return AdditiveForBudget(AdditiveSpecFor(p.UHNO), CountUHNO(p.UHNO))
		},
		New: NewAdditive,
		Describe: func(s AdditiveSpec, _ *Additive) string {
			return fmt.Sprintf("additive (flat FNO + depthwise-conv hybrid), width %d, %d blocks, K0 %d", s.Width, s.Blocks, s.K0)
		}})
	registerBaseline("wno", "WNO", "wavelet neural operator, db4", func(p Plan) (WNOSpec, error) {
		s := WNOSpecFor(p.UHNO)
		s.Grid = slices.Clone(p.Grid)
		return WNOForBudget(s, p.fullCount())
	}, NewWNO, func(s WNOSpec) string {
		return fmt.Sprintf("width %d, %d blocks, %d levels", s.Width, s.Blocks, s.Levels)
	})
	registerBaseline("ffno", "FFNO", "F-FNO, the paper's reading: rank-8 spectral weights", func(p Plan) (FFNOSpec, error) {
		return FFNOForBudget(FFNOSpecFor(p.UHNO), p.fullCount())
	}, NewFFNO, func(s FFNOSpec) string {
		return fmt.Sprintf("width %d, rank %d, %d blocks, K0 %d", s.Width, s.Rank, s.Blocks, s.K0)
	})
	registerBaseline("loglofno", "LogLo-FNO", "LogLo-FNO: modes allocated by 1/log(1+k)", func(p Plan) (LogLoFNOSpec, error) {
		return LogLoFNOForBudget(LogLoFNOSpecFor(p.UHNO), p.fullCount())
	}, NewLogLoFNO, func(s LogLoFNOSpec) string {
		return fmt.Sprintf("width %d, %d blocks, K0 %d", s.Width, s.Blocks, s.K0)
	})
	registerBaseline("convfno", "Conv-FNO", "Conv-FNO: U-Net pre-processor, then FNO", func(p Plan) (ConvFNOSpec, error) {
		return ConvFNOForBudget(ConvFNOSpecFor(p.UHNO), p.fullCount())
	}, NewConvFNO, func(s ConvFNOSpec) string {
		return fmt.Sprintf("U-Net %d levels from width %d, FNO width %d, %d blocks", s.UNetLevels, s.UNetWidth, s.Width, s.Blocks)
	})
	registerBaseline("cno", "CNO", "convolutional neural operator, band-limited resampling", func(p Plan) (CNOSpec, error) {
		return CNOForBudget(CNOSpecFor(p.UHNO), p.fullCount())
	}, NewCNO, func(s CNOSpec) string {
		return fmt.Sprintf("bottleneck width %d, %d levels, %d neck blocks", s.Width, s.Levels, s.NeckBlocks)
	})
	registerBaseline("gno", "GNO", "graph kernel network, 3^d-1 neighbour grid graph", func(p Plan) (GNOSpec, error) {
		s := GNOSpecFor(p.UHNO)
		s.Periodic = p.Periodic
		return GNOForBudget(s, p.fullCount())
	}, NewGNO, func(s GNOSpec) string {
		edges := "periodic"
		if !s.Periodic {
			edges = "non-periodic"
		}
		return fmt.Sprintf("width %d, %d rounds, kernel MLP hidden %d, %s edges", s.Width, s.Rounds, s.KernelHidden, edges)
	})
	registerBaseline("fno-wider", "FNO-wider", "FNO at the paper's Tab. fno-wider width ratio 56/24, not matched", func(p Plan) (FNOSpec, error) {
		return FNOWiderSpec(p.UHNO), nil
	}, NewFNO, func(s FNOSpec) string {
		return fmt.Sprintf("width %d, %d blocks, K0 %d", s.Width, s.Blocks, s.K0)
	})
}

// registerBaseline registers one of the paper's baselines besides FNO,
// called paper in its tables, described as "name (about), details".
func registerBaseline[S any, M Model](name, paper, about string, plan func(Plan) (S, error), newM func(tensor.Backend, S, uint64) (M, error), details func(S) string) {
	Register(name, Builder[S, M]{Paper: paper, Plan: plan, New: newM,
		Describe: func(s S, _ M) string { return fmt.Sprintf("%s (%s), %s", name, about, details(s)) }})
}
