package flagcheck

import "testing"

func TestCheck(t *testing.T) {
	tests := []struct {
		name  string
		flags []Int
		want  string // "" for no error
	}{
		{"none", nil, ""},
		{"all in range", []Int{NonNeg("--steps", 0, ""), Positive("--keep", 1), NonNeg("--batch", 7, "the task's")}, ""},
		{"negative", []Int{NonNeg("--steps", 5, ""), NonNeg("--batch", -3, "")}, "train: --batch -3: want 0 or more"},
		{"zero says what 0 means", []Int{NonNeg("--batch", -1, "the task's")}, "train: --batch -1: want 0 or more (0: the task's)"},
		{"positive refuses 0", []Int{Positive("--resamples", 0)}, "train: --resamples 0: want 1 or more"},
		{"the first out of range", []Int{Positive("--keep", -2), NonNeg("--steps", -1, "")}, "train: --keep -2: want 1 or more"},
		{"a minimum of its own", []Int{{Name: "--order", Value: 1, Min: 2}}, "train: --order 1: want 2 or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check("train", tt.flags...)
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Check = %q, want %q", got, tt.want)
			}
		})
	}
}
