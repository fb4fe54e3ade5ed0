package train

import (
	"encoding/json"
	"testing"

	"uhno/internal/config"
)

// TestDecodeStateDataSeed: a state.json with data.seed keeps it; one
// written before the key existed (its runs trained on the data of the
// run's seed) gets the run's seed as its data seed, so that it resumes and
// evaluates on its own data.
func TestDecodeStateDataSeed(t *testing.T) {
	st := State{Format: checkpointFormat, Step: 1, Schedule: Schedule{Peak: 1e-3, Warmup: 0, Steps: 2}, Params: 10, Task: "burgers",
		Config: config.Config{Task: "burgers", Seed: 5}}
	st.Config.Data.Seed = 2
	raw, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeState("dir", raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.Config.Seed != 5 || got.Config.Data.Seed != 2 {
		t.Errorf("with data.seed: seed %d, data.seed %d; want 5 and 2", got.Config.Seed, got.Config.Data.Seed)
	}
	// The same state as an older uhno wrote it: no data.seed.
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	data := m["config"].(map[string]any)["data"].(map[string]any)
	delete(data, "seed")
	old, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if got, err = decodeState("dir", old); err != nil {
		t.Fatal(err)
	}
	if got.Config.Seed != 5 || got.Config.Data.Seed != 5 {
		t.Errorf("without data.seed: seed %d, data.seed %d; want 5 and 5 (the run's seed)", got.Config.Seed, got.Config.Data.Seed)
	}
}
