package train

import (
	"fmt"
	"math"
)

// Schedule is the learning-rate schedule of the paper (Sec. 4.1
// "Implementation": AdamW at 1e-3, cosine annealing with 1,000 warm-up
// steps over 20,000 steps): a linear warm-up to Peak over the first Warmup
// optimizer steps, then cosine annealing from Peak to 0 over the remaining
// Steps - Warmup steps.
//
// Steps are counted from 1: LR(t) is the rate used by the t-th update,
// t = 1..Steps,
//
//	LR(t) = Peak * t / Warmup                                  t <= Warmup
//	LR(t) = Peak * (1 + cos(pi (t - Warmup) / (Steps - Warmup))) / 2   t > Warmup
//
// so the first update already moves (Peak/Warmup, not 0), the last warm-up
// step reaches Peak, and the last step of the run has rate 0. With Warmup 0
// the cosine starts at t = 1.
type Schedule struct {
	Peak          float64
	Warmup, Steps int
}

// Validate reports a schedule that cannot be followed.
func (s Schedule) Validate() error {
	switch {
	case !(s.Peak > 0) || math.IsInf(s.Peak, 0):
		return fmt.Errorf("train: learning rate %g, want a positive finite value", s.Peak)
	case s.Steps < 1:
		return fmt.Errorf("train: %d steps, want >= 1", s.Steps)
	case s.Warmup < 0 || s.Warmup >= s.Steps:
		return fmt.Errorf("train: %d warm-up steps, want 0 <= warmup < steps (%d)", s.Warmup, s.Steps)
	}
	return nil
}

// LR returns the learning rate of update t (1-based, see Schedule). It
// panics outside 1..Steps: the loop never asks for another step.
func (s Schedule) LR(t int) float64 {
	if t < 1 || t > s.Steps {
		panic(fmt.Sprintf("train: Schedule.LR(%d) outside 1..%d", t, s.Steps))
	}
	if t <= s.Warmup {
		return s.Peak * float64(t) / float64(s.Warmup)
	}
	progress := float64(t-s.Warmup) / float64(s.Steps-s.Warmup)
	return s.Peak * 0.5 * (1 + math.Cos(math.Pi*progress))
}
