package experiment

import (
	"testing"
)

func TestOneLine(t *testing.T) {
	tests := map[string]string{
		"plain": "plain",
		"unknown command \"x\" for \"uhno\"\n\nDid you mean this?\n\ttrain\n": "unknown command \"x\" for \"uhno\" Did you mean this? train",
		"  padded  ": "padded",
	}
	for in, want := range tests {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
