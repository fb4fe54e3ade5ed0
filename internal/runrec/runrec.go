// Package runrec reads what `uhno train` leaves in a run directory beside
// the weights: each checkpoint's state and build record (the model, the
// data file and its stamp, the normalisation statistics, the run
// control) and the JSON-lines log. Package train writes them; experiment,
// report and dynamics read them here, so each format has one reader.
package runrec

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"uhno/internal/data"
	"uhno/internal/model"
	"uhno/internal/train"
)

// BuildRecord is stored in every checkpoint (train.Config.Build): what is
// needed to rebuild the same model and data pipeline on resume.
type BuildRecord struct {
	// Record is the model: its registered name and spec ({"model": ...,
	// "spec": ...}; older checkpoints kept the spec in "uhno", "fno",
	// "additive" or "baseline", which DecodeRecord upgrades).
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
	// Precision is the run's --precision, bf16 or fp32; absent in
	// checkpoints of older versions, which trained in fp32.
	Precision string `json:"precision,omitempty"`
	// Stats are the normalisation statistics the run trains with (the
	// training split's per-field mean and std). Eval, resume, ablate and
	// predict normalise with them, so a run needs nothing but its
	// checkpoint and its data file. Absent in checkpoints of older
	// versions (experiment's runStats then finds or recomputes them).
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

// ErrNoRecord is wrapped by DecodeRecord's error for a checkpoint whose
// build record is missing or unreadable.
var ErrNoRecord = errors.New("no usable build record")

// Read reads the state of the checkpoint path names (a run or step
// directory) and its build record, and validates the configuration it
// holds: a checkpoint is outside input. It returns the step directory
// read. Errors start with "train: ", as train.ReadState's do, for callers
// to word as their own command's.
func Read(path string) (train.State, string, BuildRecord, error) {
	st, dir, err := train.ReadState(path)
	if err != nil {
		return st, dir, BuildRecord{}, err
	}
	if err := st.Config.Validate(); err != nil {
		return st, dir, BuildRecord{}, fmt.Errorf("train: checkpoint %s holds an invalid configuration: %w", dir, err)
	}
	rec, err := DecodeRecord(dir, st.Build)
	return st, dir, rec, err
}

// DecodeRecord decodes the build record raw of the checkpoint in dir,
// upgrading the model spec of an older one (model.Record.Upgrade).
func DecodeRecord(dir string, raw json.RawMessage) (BuildRecord, error) {
	var rec BuildRecord
	if err := json.Unmarshal(raw, &rec); err != nil || rec.Model == "" {
		return BuildRecord{}, fmt.Errorf("train: checkpoint %s has no usable build record; it was not written by uhno train: %w", dir, ErrNoRecord)
	}
	rec.Upgrade()
	return rec, nil
}

// UHNOWidth is the width C0 of the U-HNO the record builds (the
// configuration's model.c0, scaled by --params), false for another model.
func (r BuildRecord) UHNOWidth() (int, bool) {
	if r.Model != "uhno" {
		return 0, false
	}
	var s model.Spec
	if json.Unmarshal(r.Spec, &s) != nil || s.C0 < 1 {
		return 0, false
	}
	return s.C0, true
}

// LineError is ScanLog's error for one line of a log: the file, the
// 1-based line number and what went wrong there.
type LineError struct {
	Path string
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// ScanLog calls fn with each non-blank line of the JSON-lines log at path
// (train.LogFile), trimmed, and its 1-based line number, in order, and
// stops at fn's first error, which it returns wrapped with the file and
// line ("runs/x/log.jsonl:17: ..."). A last line without its newline
// that fn refuses and that is not valid JSON is a record being written
// (or cut by a kill): it is left out and torn is true. An error opening
// or reading the file is returned as it is.
func ScanLog(path string, fn func(n int, line []byte) error) (torn bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	for n := 1; ; n++ {
		line, rerr := r.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return false, &LineError{path, n, rerr}
		}
		last := errors.Is(rerr, io.EOF)
		if text := bytes.TrimSpace(line); len(text) > 0 {
			if ferr := fn(n, text); ferr != nil {
				if last && !bytes.HasSuffix(line, []byte("\n")) && !json.Valid(text) {
					return true, nil
				}
				return false, &LineError{path, n, ferr}
			}
		}
		if last {
			return false, nil
		}
	}
}
