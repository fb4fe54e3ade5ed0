//go:build !race

package testutil

// Race is false outside the race detector (see race.go).
const Race = false
