package experiment

import (
	"encoding/json"
	"fmt"

	"uhno/internal/data"
	"uhno/internal/model"
	"uhno/internal/train"
)

// BuildRecord is stored in every checkpoint (train.Config.Build): what is
// needed to rebuild the same model and data pipeline on resume.
type BuildRecord struct {
	// Record is the model: its registered name and spec ({"model": ...,
	// "spec": ...}; older checkpoints kept the spec in "uhno", "fno",
	// "additive" or "baseline", which readRecord upgrades).
	model.Record
	Data     string `json:"data"`   // the data file, an absolute path (relative in older checkpoints: as given)
	Stride   int    `json:"stride"` // spatial subsampling on read
	ValPairs int    `json:"val_pairs"`
	// DataStamp fingerprints the data file as the run first indexed it
	// (size and sampled SHA-256, data.FileStamp); a resume refuses a file
	// that no longer matches. Absent in checkpoints of older versions.
	DataStamp *data.FileStamp `json:"data_stamp,omitempty"`
	// Control holds the run-control settings in effect when the
	// checkpoint was written; a resume restores them. Absent in
	// checkpoints of older versions.
	Control *RunControl `json:"control,omitempty"`
	// Precision is the run's --precision, bf16 or fp32 (precision.go);
	// absent in checkpoints of older versions, which trained in fp32.
	Precision string `json:"precision,omitempty"`
	// Stats are the normalisation statistics the run trains with (the
	// training split's per-field mean and std). Eval, resume, ablate and
	// predict normalise with them, so a run needs nothing but its
	// checkpoint and its data file. Absent in checkpoints of older
	// versions (runStats then finds or recomputes them).
	Stats *data.Stats `json:"stats,omitempty"`
}

// RunControl is the run-control settings of `uhno train`: how often to log,
// validate and checkpoint, how many checkpoints to keep, the CPU thread
// count and CUDA-graph replay. None changes the weights: the CPU backend
// gives the same bits for any thread count, graph replay computes what the
// direct loop does, and the intervals only choose when to look and save.
// A resumed run therefore keeps them unless the resume command line gives
// the flag, which then wins (and is recorded from then on), with one line
// saying so. Every other setting stays refused on resume
// (cmd/uhno refuses the flags): --batch, --params, --set and the like change the
// math, and --val-pairs changes the validation set whose best value the
// run tracks. --stop-after, --out, --data, --quiet and --dist-timeout are
// not recorded: they belong to one invocation (where to stop this time,
// where to write, where the data cache is, whether to draw a progress
// bar, how long ranks wait for each other).
type RunControl struct {
	LogEvery  int  `json:"log_every"`
	ValEvery  int  `json:"val_every"`
	CkptEvery int  `json:"ckpt_every"`
	Keep      int  `json:"keep"`
	Threads   int  `json:"threads"` // 0: all cores
	Graph     bool `json:"graph"`
	// DynamicsEvery and DynamicsTrajs are --dynamics-every (0: off) and
	// --dynamics-trajectories. Checkpoints of older versions record
	// neither (nil, 0); a resume of such a run takes the flags' values,
	// as it does for every setting without a record.
	DynamicsEvery *int `json:"dynamics_every,omitempty"`
	DynamicsTrajs int  `json:"dynamics_trajectories,omitempty"`
}

// readRun reads the state of the checkpoint path names (a run or step
// directory) and its build record, and validates the configuration it
// holds: a checkpoint is outside input. Errors are worded as command
// cmd's (AsCommand).
func readRun(cmd, path string) (train.State, string, BuildRecord, error) {
	st, dir, err := train.ReadState(path)
	if err != nil {
		return st, dir, BuildRecord{}, AsCommand(cmd, err)
	}
	if err := st.Config.Validate(); err != nil {
		return st, dir, BuildRecord{}, fmt.Errorf("%s: checkpoint %s holds an invalid configuration: %w", cmd, dir, err)
	}
	rec, err := readRecord(cmd, dir, st.Build)
	return st, dir, rec, err
}

// readRecord decodes a checkpoint's build record, upgrading the model
// spec of an older one (model.Record.Upgrade).
func readRecord(cmd, dir string, raw json.RawMessage) (BuildRecord, error) {
	var rec BuildRecord
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Model == "" {
		return BuildRecord{}, fmt.Errorf("%s: checkpoint %s has no usable build record; it was not written by uhno train", cmd, dir)
	}
	rec.Upgrade()
	return rec, nil
}
