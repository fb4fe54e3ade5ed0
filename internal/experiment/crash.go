package experiment

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"uhno/internal/train"
)

// CrashEnv names the fault-injection variable of `uhno train`, for tests:
// UHNO_TEST_CRASH_IN_CHECKPOINT=STAGE[@STEP] makes the process kill itself
// with SIGKILL (no clean-up, as a power cut or the OOM killer would) when
// a checkpoint save reaches STAGE (train.SaveStages: mid-weights,
// after-weights, after-optimizer, after-state, before-rename,
// before-latest, before-prune), in the checkpoint of step STEP or, without
// @STEP, in the first checkpoint this process writes. The crash tests use
// it to show that `latest` always names a complete checkpoint and that a
// resume continues bit for bit. Not for normal use.
const CrashEnv = "UHNO_TEST_CRASH_IN_CHECKPOINT"

// CrashHook returns the train.Config.SaveFault that CrashEnv's value spec
// asks for (nil for an empty spec), or a one-line error for a bad spec.
func CrashHook(spec string) (func(step int, stage string) error, error) {
	if spec == "" {
		return nil, nil
	}
	stage, stepText, hasStep := strings.Cut(spec, "@")
	step := 0
	bad := func() error {
		return fmt.Errorf("train: %s=%q: want STAGE[@STEP] with STAGE one of %s and STEP a positive step",
			CrashEnv, spec, strings.Join(train.SaveStages(), ", "))
	}
	if !slices.Contains(train.SaveStages(), stage) {
		return nil, bad()
	}
	if hasStep {
		n, err := strconv.Atoi(stepText)
		if err != nil || n < 1 {
			return nil, bad()
		}
		step = n
	}
	return func(at int, s string) error {
		if s != stage || (step != 0 && at != step) {
			return nil
		}
		if p, err := os.FindProcess(os.Getpid()); err == nil {
			p.Kill() // SIGKILL: the process ends here
		}
		time.Sleep(time.Minute)
		return fmt.Errorf("train: %s: the process survived SIGKILL", CrashEnv)
	}, nil
}
