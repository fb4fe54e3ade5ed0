// Package flagcheck refuses integer flags below their range with a
// one-line error that names the command, the flag, the value given and
// the least value wanted ("train: --batch -3: want 0 or more (0: the
// task's)"), so that a user who mistypes one flag among several is told
// which. Each command lists its integer flags once, in the order of its
// help; the first one out of range is reported.
package flagcheck

import "fmt"

// Int is one integer flag and the least value it accepts.
type Int struct {
	Name  string // as typed, with its dashes: "--batch"
	Value int
	Min   int
	Zero  string // where Min is 0 and 0 is special, what 0 means ("the task's"); else ""
}

// NonNeg is a flag that accepts 0 or more; zero says what 0 means, or "".
func NonNeg(name string, value int, zero string) Int {
	return Int{Name: name, Value: value, Min: 0, Zero: zero}
}

// Positive is a flag that accepts 1 or more.
func Positive(name string, value int) Int { return Int{Name: name, Value: value, Min: 1} }

// Check returns an error for the first flag below its minimum, prefixed
// by cmd ("train"), or nil if every flag is in range.
func Check(cmd string, flags ...Int) error {
	for _, f := range flags {
		if f.Value >= f.Min {
			continue
		}
		if f.Zero != "" {
			return fmt.Errorf("%s: %s %d: want %d or more (0: %s)", cmd, f.Name, f.Value, f.Min, f.Zero)
		}
		return fmt.Errorf("%s: %s %d: want %d or more", cmd, f.Name, f.Value, f.Min)
	}
	return nil
}
