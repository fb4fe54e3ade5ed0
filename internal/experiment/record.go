package experiment

import (
	"encoding/json"

	"uhno/internal/runrec"
	"uhno/internal/train"
)

// readRun reads the state of the checkpoint path names (a run or step
// directory), its build record and validated configuration
// (runrec.Read), with errors worded as command cmd's (AsCommand).
func readRun(cmd, path string) (train.State, string, runrec.BuildRecord, error) {
	st, dir, rec, err := runrec.Read(path)
	return st, dir, rec, AsCommand(cmd, err)
}

// readRecord decodes a checkpoint's build record (runrec.DecodeRecord),
// with errors worded as command cmd's.
func readRecord(cmd, dir string, raw json.RawMessage) (runrec.BuildRecord, error) {
	rec, err := runrec.DecodeRecord(dir, raw)
	return rec, AsCommand(cmd, err)
}
