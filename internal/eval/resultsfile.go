package eval

import "uhno/internal/config"

// ResultsFormat versions results.json.
const ResultsFormat = "uhno-eval/1"

// ResultsFile is results.json, the output of `uhno eval`
// (internal/experiment writes it; ablate reads its own evaluations back
// from it). Its one definition: a reader that decodes it with another
// type drifts from the writer without a compile error.
type ResultsFile struct {
	Format      string         `json:"format"`
	Version     string         `json:"uhno_version"`
	Task        string         `json:"task"`
	Steps       int            `json:"rollout_steps"`
	HorizonMult int            `json:"horizon_mult"`
	Data        string         `json:"data"`
	Trajs       int            `json:"test_trajectories"`
	Models      []ResultsModel `json:"models"`
}

// ResultsModel is one evaluated checkpoint of a ResultsFile.
type ResultsModel struct {
	Label      string        `json:"label"`
	Model      string        `json:"model"`
	Params     int           `json:"params"`
	Checkpoint string        `json:"checkpoint"`
	Step       int           `json:"step"`
	Config     config.Config `json:"config"`
	Elapsed    float64       `json:"elapsed_s"`
	Eval       Summary       `json:"evaluation"`
}
