package experiment

import (
	"fmt"
	"strings"
	"testing"

	"uhno/internal/train"
)

// TestCrashEnvRefusesBadValue checks the one-line error for a malformed
// UHNO_TEST_CRASH_IN_CHECKPOINT.
func TestCrashEnvRefusesBadValue(t *testing.T) {
	for _, v := range []string{"after-weight", "after-weights@0", "after-weights@x"} {
		_, err := CrashHook(v)
		want := fmt.Sprintf("train: %s=%q: want STAGE[@STEP] with STAGE one of %s and STEP a positive step", CrashEnv, v, strings.Join(train.SaveStages(), ", "))
		if err == nil || err.Error() != want {
			t.Errorf("%q: got %v, want %s", v, err, want)
		}
	}
	if f, err := CrashHook(""); f != nil || err != nil {
		t.Errorf("empty value: %v, %v; want no hook", f != nil, err)
	}
	if _, err := CrashHook("before-prune@7"); err != nil {
		t.Error(err)
	}
}
