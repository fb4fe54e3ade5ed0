package model

import (
	"fmt"

	"uhno/internal/tensor"
)

// The constructors every flat model shares (FNO and the baselines):
// validate the spec, declare the layers with the model's build function,
// then allocate the parameters, count them without allocating, or search
// the width that matches a parameter budget. Each model's New, Count and
// ForBudget is a line over these.

// validator is a spec that checks itself.
type validator interface{ Validate() error }

// construct validates s, declares the model's layers with layers and
// allocates their parameters on b, initialised from seed.
func construct[S validator, M any](b tensor.Backend, s S, seed uint64, layers func(*builder, S) M) (M, *Params, error) {
	if err := s.Validate(); err != nil {
		var zero M
		return zero, nil, err
	}
	pb := newBuilder()
	m := layers(pb, s)
	return m, pb.allocate(b, seed), nil
}

// countOf is the number of parameters layers declares for s, computed
// without allocating them. It panics on an invalid spec.
func countOf[S validator, M any](s S, layers func(*builder, S) M) int {
	if err := s.Validate(); err != nil {
		panic(err.Error())
	}
	pb := newBuilder()
	layers(pb, s)
	return pb.count()
}

// widthed is a spec whose width a budget search sets.
type widthed[S any] interface {
	validator
	withWidth(w int) S
}

// fitWidth returns s with the width whose parameter count (count) is
// closest to target, within BudgetTolerance (widthForBudget); name labels
// the error.
func fitWidth[S widthed[S]](s S, target int, name string, count func(S) int) (S, error) {
	s = s.withWidth(1)
	if err := s.Validate(); err != nil {
		return s, err
	}
	w, err := widthForBudget(func(w int) int { return count(s.withWidth(w)) }, target, 1)
	if err != nil {
		return s, fmt.Errorf("model: %s width for %s parameters: %w", name, FormatCount(target), err)
	}
	return s.withWidth(w), nil
}
