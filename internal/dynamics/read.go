package dynamics

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"uhno/internal/runrec"
	"uhno/internal/train"
)

// Series is what Read found in one run's log.jsonl, each list in
// increasing order of steps (the log's order).
type Series struct {
	// Path is the log file read.
	Path string
	// Train and Val are the loss records ("kind": "train" every
	// --log-every steps, "val" every --val-every steps).
	Train, Val []Loss
	// Dynamics are the "dynamics" probe records, Angles the "angle" ones.
	Dynamics []Point
	Angles   []AnglePoint
	// Skipped counts the records Read does not use: probes of other names
	// and kinds it does not know (a newer uhno's), by name or kind, and
	// records of a step already read ("duplicate step": the last is kept).
	Skipped map[string]int
	// Torn is true when the log ended in a partial line (a run still
	// writing it, or killed mid-line), which Read left out.
	Torn bool
}

// Loss is one training or validation record: the loss terms of Eq. loss,
// the learning rate and, in training records of routing models, the batch
// means of the SPAR keep-ratio and contrast per routing stage.
type Loss struct {
	Step int
	LR   float64
	train.LossValues
	Rho, Contrast []float64
}

// Point is one "dynamics" record: the step after which it was measured
// and its Record.
type Point struct {
	Step int
	Record
}

// AnglePoint is one "angle" record: the step and the angles in degrees.
type AnglePoint struct {
	Step    int
	Degrees []float64
}

// logHead is what every record of a log line has: its kind and step. The
// records themselves are decoded into the types their writer, package
// train, defines (train.LogRecord, train.ProbeRecord).
type logHead struct {
	Kind string `json:"kind"`
	Step *int   `json:"step"`
}

// Read parses the JSON-lines log of a training run (train.LogFile) into a
// Series. A line that is not a JSON object with a step, or a known record
// whose fields do not decode, is an error naming the file and the line
// number ("dynamics: runs/x/log.jsonl:17: ..."); so is a log with no
// record at all. A last line without its newline that does not parse is
// a record being written (or cut by a kill): it is left out and
// Series.Torn set. Records of other probes, and kinds this version does
// not know, are counted in Series.Skipped.
func Read(logPath string) (*Series, error) {
	s := &Series{Path: logPath, Skipped: map[string]int{}}
	records := 0
	torn, err := runrec.ScanLog(logPath, func(_ int, line []byte) error {
		if err := s.add(line); err != nil {
			return err
		}
		records++
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("dynamics: %w", err)
	}
	s.Torn = torn
	if records == 0 {
		return nil, fmt.Errorf("dynamics: %s: no records (is it a uhno training log?)", logPath)
	}
	s.Train = byStep(s.Train, func(l Loss) int { return l.Step }, s.Skipped)
	s.Val = byStep(s.Val, func(l Loss) int { return l.Step }, s.Skipped)
	s.Dynamics = byStep(s.Dynamics, func(p Point) int { return p.Step }, s.Skipped)
	s.Angles = byStep(s.Angles, func(a AnglePoint) int { return a.Step }, s.Skipped)
	return s, nil
}

// byStep orders records by step, keeping the last of records with the
// same step (a log pieced together by hand; train.Run never writes
// two) and counting the others in skipped["duplicate step"].
func byStep[T any](recs []T, step func(T) int, skipped map[string]int) []T {
	slices.SortStableFunc(recs, func(a, b T) int { return cmp.Compare(step(a), step(b)) })
	out := recs[:0]
	for i, r := range recs {
		if i+1 < len(recs) && step(recs[i+1]) == step(r) {
			skipped["duplicate step"]++
			continue
		}
		out = append(out, r)
	}
	return out
}

// add parses one log line into s.
func (s *Series) add(line []byte) error {
	var head logHead
	if err := json.Unmarshal(line, &head); err != nil {
		return fmt.Errorf("not a log record: %w", err)
	}
	if head.Step == nil {
		return fmt.Errorf("a %q record without a step", head.Kind)
	}
	step := *head.Step
	switch head.Kind {
	case train.KindTrain, train.KindVal:
		var l train.LogRecord
		if err := json.Unmarshal(line, &l); err != nil {
			return fmt.Errorf("not a log record: %w", err)
		}
		rec := Loss{Step: step, LR: l.LR, LossValues: l.LossValues, Rho: l.Rho, Contrast: l.Contrast}
		if l.Kind == train.KindTrain {
			s.Train = append(s.Train, rec)
		} else {
			s.Val = append(s.Val, rec)
		}
	case train.ProbeKind:
		var l train.ProbeRecord
		if err := json.Unmarshal(line, &l); err != nil {
			return fmt.Errorf("not a log record: %w", err)
		}
		switch l.Probe {
		case ProbeName:
			var rec Record
			if err := json.Unmarshal(l.Value, &rec); err != nil {
				return fmt.Errorf("step %d: %s record: %w", step, ProbeName, err)
			}
			if err := rec.check(); err != nil {
				return fmt.Errorf("step %d: %s record: %w", step, ProbeName, err)
			}
			s.Dynamics = append(s.Dynamics, Point{Step: step, Record: rec})
		case AngleProbeName:
			deg, err := decodeAngles(l.Value)
			if err != nil {
				return fmt.Errorf("step %d: %s record: %w", step, AngleProbeName, err)
			}
			s.Angles = append(s.Angles, AnglePoint{Step: step, Degrees: deg})
		case "":
			return fmt.Errorf("step %d: a probe record without a probe name", step)
		default:
			s.Skipped["probe "+l.Probe]++
		}
	default:
		s.Skipped["kind "+head.Kind]++
	}
	return nil
}

// decodeAngles reads an angle record's value: an AngleRecord or a bare
// array of degrees.
func decodeAngles(raw json.RawMessage) ([]float64, error) {
	raw = bytes.TrimSpace(raw)
	var rec AngleRecord
	if len(raw) > 0 && raw[0] == '[' {
		if err := json.Unmarshal(raw, &rec.Degrees); err != nil {
			return nil, err
		}
	} else if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, err
	}
	deg := make([]float64, len(rec.Degrees))
	for i, v := range rec.Degrees {
		deg[i] = float64(v)
	}
	return deg, nil
}

// check reports a Record whose lists do not fit together.
func (r Record) check() error {
	if r.RolloutSteps < 1 || len(r.BandSteps) != r.RolloutSteps {
		return fmt.Errorf("%d rollout steps and %d band_steps entries, want equal and >= 1", r.RolloutSteps, len(r.BandSteps))
	}
	if len(r.Contrast) != len(r.Stages) || len(r.Rho) != len(r.Stages) {
		return fmt.Errorf("%d stages, %d contrast and %d rho lists, want one of each per stage", len(r.Stages), len(r.Contrast), len(r.Rho))
	}
	for i := range r.Stages {
		if len(r.Contrast[i]) != len(r.Rho[i]) {
			return fmt.Errorf("stage %s: %d contrast and %d rho values, want one of each per trajectory", r.Stages[i], len(r.Contrast[i]), len(r.Rho[i]))
		}
	}
	return nil
}
