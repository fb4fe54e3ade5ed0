package train

import (
	"encoding/json"
	"fmt"

	"github.com/maruel/safetensors"

	"uhno/internal/config"
)

// Checkpoint layout. A run directory holds one sub-directory per saved
// step and a pointer to the newest:
//
//	<run>/latest                      "step-00001000\n"
//	<run>/step-00001000/weights.safetensors
//	<run>/step-00001000/optimizer.safetensors
//	<run>/step-00001000/state.json
//	<run>/step-00001000/manifest.json  (written last)
//	<run>/log.jsonl                    the training log
const (
	// WeightsFile holds the parameters as float32 tensors named by the
	// parameter names (Model.Params().List()), in safetensors format: torch
	// users read it with safetensors.torch.load_file.
	WeightsFile = "weights.safetensors"
	// OptimizerFile holds AdamW's first and second moments as two flat
	// float32 tensors "adamw.m" and "adamw.v" in the order of the flat
	// parameter buffer.
	OptimizerFile = "optimizer.safetensors"
	// StateFile is the JSON State: step, schedule, data order, best
	// validation loss, the resolved configuration, model and version.
	StateFile = "state.json"
	// ManifestFile lists the size and SHA-256 of each other file; it is
	// written last, so a directory without it is incomplete.
	ManifestFile = "manifest.json"
	// LatestFile in a run directory names the newest checkpoint.
	LatestFile = "latest"

	// checkpointFormat versions State and the directory layout.
	checkpointFormat = "uhno-checkpoint/1"
	momentM          = "adamw.m"
	momentV          = "adamw.v"
)

// State is the JSON part of a checkpoint: everything besides the tensors
// that resuming needs, and what a reader needs to know what it holds.
type State struct {
	Format string `json:"format"`
	// Step is the number of optimizer updates done (the next is Step+1).
	Step int `json:"step"`
	// LR is the learning rate of update Step.
	LR       float64  `json:"lr"`
	Schedule Schedule `json:"schedule"`
	Optim    AdamW    `json:"optim"`
	// Loss holds the terms of update Step.
	Loss LossValues `json:"loss"`
	// BestVal is the lowest validation loss so far, at step BestValStep
	// (0 when none was measured).
	BestVal     float64 `json:"best_val,omitempty"`
	BestValStep int     `json:"best_val_step,omitempty"`
	// Data is the position in the training batch stream.
	Data DataState `json:"data"`
	// Model is the architecture's name and Params its parameter count.
	Model  string `json:"model"`
	Params int    `json:"params"`
	// Task and Config are the resolved configuration of the run.
	Task    string        `json:"task"`
	Config  config.Config `json:"config"`
	Version string        `json:"uhno_version"`
	// Build is what the command line recorded to rebuild the model and the
	// data pipeline on resume (Config.Build), opaque to this package.
	Build json.RawMessage `json:"build,omitempty"`
}

// DataState is the data-order state. The batch stream is a pure function
// of its seed and the number of batches drawn (data.Batcher guarantees
// this), so Drawn restores it exactly.
type DataState struct {
	Seed  uint64 `json:"seed"`
	Drawn int    `json:"batches_drawn"`
	Batch int    `json:"batch"`
}

// manifest is ManifestFile.
type manifest struct {
	Format string                  `json:"format"`
	Files  map[string]manifestFile `json:"files"`
}

type manifestFile struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// checkpoint is the in-memory content of one checkpoint.
type checkpoint struct {
	State   State
	Weights map[string]safetensors.Tensor
	Order   []string // weight names in file order
	M, V    []float32
}

// StepDirName is the name of the checkpoint directory of a step.
func StepDirName(step int) string { return fmt.Sprintf("step-%08d", step) }
