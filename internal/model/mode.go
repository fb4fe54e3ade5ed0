package model

import (
	"fmt"
	"slices"
	"strings"
)

// Mode is an ablation mode of Tab. ablation-setup: ModeFull or one of
// "A" ... "I". Spec.Mode and Model.Mode hold its string; the type owns
// what every command needs of a mode (parsing --mode and --modes, the
// row labels of Tab. burgers-ablation, and which modes change only the
// loss), so that no command keeps its own list.
type Mode string

// Modes lists every mode in the paper's order.
func Modes() []string {
	return []string{ModeFull, "A", "B", "C", "D", "E", "F", "G", "H", "I"}
}

// modeLabels are the row labels of Tab. burgers-ablation.
var modeLabels = map[Mode]string{ModeFull: "Full U-HNO", ModeNoLocal: "A: NoLocal", ModeNoGlobal: "B: NoGlobal",
	ModeNoCBC: "C: NoCBC", ModeNoH1: "D: NoH1", ModeMSE: "E: MSE only", ModeNoSPAR: "F: NoSPAR", ModeNoUShape: "G: NoUShape",
	ModeSymDec: "H: SymDec", ModeNoNorm: "I: NoNorm"}

// Label is the mode's row label in the paper's words (Tab.
// burgers-ablation), or the mode itself when it is not one of Modes.
func (m Mode) Label() string {
	if l, ok := modeLabels[m]; ok {
		return l
	}
	return string(m)
}

// LossOnly reports whether the mode builds Full U-HNO's network: Full and
// the loss-only modes C, D and E. Only those apply to the other models
// (the baselines have no branches to ablate).
func (m Mode) LossOnly() bool {
	switch m {
	case ModeFull, ModeNoCBC, ModeNoH1, ModeMSE:
		return true
	}
	return false
}

// Canonical spells a --mode value as Spec.Mode does: "full" in lower
// case, a letter in upper case. It does not check that the mode exists
// (Valid does).
func (m Mode) Canonical() Mode {
	if strings.EqualFold(string(m), ModeFull) {
		return ModeFull
	}
	return Mode(strings.ToUpper(string(m)))
}

// Valid reports whether m is one of Modes.
func (m Mode) Valid() bool { return slices.Contains(Modes(), string(m)) }

// ParseModes reads a list of modes: letters A-I, ranges (C-F) and comma
// lists, or "all"; "full" may be named but is always added. The result is
// Full followed by the modes in the paper's order, each once. The error
// names the part at fault; the caller adds which flag it came from.
func ParseModes(spec string) ([]Mode, error) {
	bad := func(part, why string) error {
		return fmt.Errorf("%q %s; want letters A-I, ranges such as C-F, comma lists or all", part, why)
	}
	want := map[string]bool{ModeFull: true}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		switch strings.ToLower(part) {
		case "":
			return nil, bad(part, "is empty")
		case "all":
			for c := 'A'; c <= 'I'; c++ {
				want[string(c)] = true
			}
			continue
		case ModeFull:
			continue
		}
		lo, hi, isRange := strings.Cut(strings.ToUpper(part), "-")
		if !isRange {
			hi = lo
		}
		if len(lo) != 1 || len(hi) != 1 || lo[0] < 'A' || lo[0] > 'I' || hi[0] < 'A' || hi[0] > 'I' {
			return nil, bad(part, "is not a mode")
		}
		if lo > hi {
			return nil, bad(part, "runs backwards")
		}
		for c := lo[0]; c <= hi[0]; c++ {
			want[string(c)] = true
		}
	}
	var out []Mode
	for _, m := range Modes() {
		if want[m] {
			out = append(out, Mode(m))
		}
	}
	return out, nil
}
