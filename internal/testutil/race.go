//go:build race

package testutil

// Race is true when the tests run under the race detector (go test
// -race). Tests whose work is serial, or that repeat under another input
// a concurrent path already exercised, use it to do less there: the race
// pass (make race) looks for data races, the plain pass for wrong
// answers, and both run in CI (D-ci-time).
const Race = true
