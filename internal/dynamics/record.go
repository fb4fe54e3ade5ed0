package dynamics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// Probe names: the "probe" field of the log records this package reads.
const (
	// ProbeName is the name of NewProbe's records (value: Record).
	ProbeName = "dynamics"
	// AngleProbeName is the name of the branch-gradient angle records
	// (value: AngleRecord, or a bare JSON array of degrees).
	AngleProbeName = "angle"
)

// Bands are the names of the three spectral bands of E_b, in the order of
// every [3] array here (eval.BandLow, eval.BandMid, eval.BandHigh).
var Bands = [3]string{"low", "mid", "high"}

// Record is the value of one "dynamics" probe record: the model after a
// training step, rolled out on the run's first Trajectories test
// trajectories for RolloutSteps steps (eval.Rollout, physical units), and
// the SPAR statistics of the first forward pass of that rollout (the
// initial frames of those trajectories).
//
// Means are over the trajectories that did not crash (eval's crash rule;
// Crashed counts the others), skipping undefined values, as the tables of
// `uhno eval` average; a mean with nothing to average is null in JSON
// (NaN here).
type Record struct {
	Trajectories int  `json:"trajectories"`
	RolloutSteps int  `json:"rollout_steps"`
	Static       bool `json:"static,omitempty"` // a single prediction a -> u (Darcy): RolloutSteps 1
	Crashed      int  `json:"crashed"`

	// Band is E_b (App. "Evaluation Metrics", binned spectral error) per
	// band, averaged over the rollout steps of each trajectory, then over
	// trajectories: the value of `uhno eval`'s band_low/mid/high.
	Band [3]Float `json:"band"`
	// BandHorizon is E_b at the last rollout step, averaged over
	// trajectories; BandSteps the same at every step (index t-1 for step t).
	BandHorizon [3]Float   `json:"band_horizon"`
	BandSteps   [][3]Float `json:"band_steps"`
	// RelL2 is relL2 averaged over steps, then trajectories;
	// RelL2Horizon relL2 at the last step, averaged over trajectories.
	RelL2        Float `json:"rel_l2"`
	RelL2Horizon Float `json:"rel_l2_horizon"`

	// Stages names the routing stages ("enc.0", ..., "mid", ..., "dec.0";
	// model.Aux.Stages). Contrast and Rho hold, per stage, the SPAR
	// contrast c and keep-ratio rho of each trajectory's first forward
	// pass (Eq. spar-rho), in trajectory order. All three are absent for
	// models without SPAR routing (FNO, modes A, B, F).
	Stages   []string   `json:"stages,omitempty"`
	Contrast []Floats32 `json:"contrast,omitempty"`
	Rho      []Floats32 `json:"rho,omitempty"`
	// RhoRange is [rho_min, rho_max] of the run's configuration (the clip
	// range of rho); absent without routing.
	RhoRange *[2]float64 `json:"rho_range,omitempty"`
}

// AngleRecord is the value of one "angle" probe record: angles in degrees
// in [0, 180] (the layer-wise angles between the branch-parameter
// gradients, App. "Gradient angle"), pooled into one histogram per record.
// An undefined angle (a branch whose gradient changes nothing) is NaN,
// written as null.
type AngleRecord struct {
	Degrees []Float `json:"degrees"`
}

// NewAngleRecord is the record of the angles deg.
func NewAngleRecord(deg []float64) AngleRecord {
	r := AngleRecord{Degrees: make([]Float, len(deg))}
	for i, v := range deg {
		r.Degrees[i] = Float(v)
	}
	return r
}

// Float is a float64 that JSON writes as null when it is NaN or infinite
// (encoding/json refuses them) and reads null as NaN.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) { return appendNum(nil, float64(f), 64), nil }

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(b []byte) error {
	v, err := parseNum(b)
	*f = Float(v)
	return err
}

// Floats32 is a list of float32 values that JSON writes with float32
// precision (the SPAR statistics are float32 on the device), non-finite
// values as null; null reads back as NaN.
type Floats32 []float32

// MarshalJSON implements json.Marshaler.
func (fs Floats32) MarshalJSON() ([]byte, error) {
	if fs == nil {
		return []byte("null"), nil
	}
	b := make([]byte, 0, 2+10*len(fs))
	b = append(b, '[')
	for i, v := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendNum(b, float64(v), 32)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (fs *Floats32) UnmarshalJSON(b []byte) error {
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw == nil {
		*fs = nil
		return nil
	}
	out := make(Floats32, len(raw))
	for i, r := range raw {
		v, err := parseNum(r)
		if err != nil {
			return err
		}
		out[i] = float32(v)
	}
	*fs = out
	return nil
}

// appendNum appends v as a JSON number of the given bit size, or null.
func appendNum(b []byte, v float64, bits int) []byte {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, bits)
}

// parseNum reads a JSON number, or null as NaN.
func parseNum(b []byte) (float64, error) {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return math.NaN(), nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return 0, fmt.Errorf("want a number or null, got %s", b)
	}
	return v, nil
}
