package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"uhno/internal/bench"
	"uhno/internal/config"
	"uhno/internal/eval"
	"uhno/internal/runrec"
	"uhno/internal/train"
)

// The formats this package reads are defined by their writers:
// eval.Results (results.json of uhno eval), eval.Ablation (ablation.json of
// uhno ablate), bench.Report (the JSON of uhno bench --json) and
// train.LogRecord (log.jsonl of uhno train).
const (
	evalFormat  = eval.ResultsFormat
	benchFormat = bench.ReportFormat
)

// File names inside the directories of uhno eval and uhno ablate.
const (
	ResultsFile  = eval.ResultsFile
	AblationFile = eval.AblationFile
)

// Kinds of input, as the report names them.
const (
	KindEval     = "evaluation (uhno eval)"
	KindAblation = "ablation (uhno ablate)"
	KindTrain    = "training run (uhno train)"
	KindBench    = "benchmark (uhno bench)"
)

// Input is one recognised input: the path given, the file read, and its
// kind.
type Input struct {
	Path, File, Kind string
}

// Skip is a path given that is none of the inputs, and why.
type Skip struct {
	Path, Why string
}

type evalInput struct {
	file string
	res  eval.Results
	// described is set for an evaluation on a user's data file (uhno
	// datagen --from; data.source described): its task is only the base
	// whose settings the runs took, so no paper value applies.
	described bool
}

// paperColumn is the column of the paper's tables e's values sit beside:
// its task, or none for described data (a name no table has, so the
// tables print ours alone).
func (e evalInput) paperColumn() string {
	if e.described {
		return "described data on " + e.res.Task + "'s settings"
	}
	return e.res.Task
}

type ablationInput struct {
	file string
	ab   eval.Ablation
}

type trainInput struct {
	dir   string
	state train.State
	rec   runrec.BuildRecord // zero when the checkpoint's record does not decode
	ckpt  string             // the checkpoint directory the state came from
	log   []train.LogRecord
}

type benchInput struct {
	file string
	rep  bench.Report
}

// inputs are the recognised inputs of a report.
type inputs struct {
	evals     []evalInput
	ablations []ablationInput
	trains    []trainInput
	benches   []benchInput
	used      []Input
	skipped   []Skip
	files     map[string]bool // files read, to read each once
}

// unrecognised says what a directory lacks.
const unrecognised = "not recognised: holds no " + ResultsFile + " (uhno eval), " + AblationFile +
	" (uhno ablate), log.jsonl with latest (uhno train) or bench JSON (uhno bench --json)"

// collect reads every path. A path that does not exist, or an input that
// does not parse, is an error; anything else unrecognised is skipped.
func collect(paths []string) (*inputs, error) {
	in := &inputs{files: map[string]bool{}}
	seen := map[string]bool{}
	for _, p := range paths {
		clean := filepath.Clean(p)
		if seen[clean] {
			continue
		}
		seen[clean] = true
		st, err := os.Stat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("report: --runs %s: no such file or directory", p)
			}
			return nil, fmt.Errorf("report: --runs %s: %v", p, err)
		}
		if st.IsDir() {
			if err := in.readDir(p); err != nil {
				return nil, err
			}
			continue
		}
		ok, err := in.readFile(p, true)
		if err != nil {
			return nil, err
		}
		if !ok {
			in.skipped = append(in.skipped, Skip{p, "not recognised: a file that is not a " + ResultsFile + ", " + AblationFile + " or bench JSON"})
		}
	}
	return in, nil
}

// readDir recognises a directory by the files it holds.
func (in *inputs) readDir(dir string) error {
	found := false
	for _, name := range []string{ResultsFile, AblationFile} {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); err != nil {
			continue
		}
		if _, err := in.readFile(path, true); err != nil {
			return err
		}
		found = true
	}
	_, errLog := os.Stat(filepath.Join(dir, train.LogFile))
	_, errLatest := os.Stat(filepath.Join(dir, train.LatestFile))
	if errLog == nil && errLatest == nil {
		if err := in.readTrain(dir); err != nil {
			return err
		}
		found = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("report: --runs %s: %v", dir, err)
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".json") || name == ResultsFile || name == AblationFile {
			continue
		}
		// Other JSON files count only when they are bench reports.
		ok, err := in.readFile(filepath.Join(dir, name), false)
		if err != nil {
			return err
		}
		found = found || ok
	}
	if !found {
		why := unrecognised
		if _, err := os.Stat(filepath.Join(dir, train.ManifestFile)); err == nil {
			why = "not recognised: a checkpoint step directory; give its run directory (the one holding log.jsonl and latest)"
		} else if errLatest == nil {
			why = "not recognised: a run directory without " + train.LogFile
		} else if errLog == nil {
			why = "not recognised: a training log without a checkpoint yet (no " + train.LatestFile + ")"
		}
		in.skipped = append(in.skipped, Skip{dir, why})
	}
	return nil
}

// expected says what a file of each name should be.
func expected(name string) string {
	switch name {
	case ResultsFile:
		return "want " + ResultsFile + " of uhno eval (format " + evalFormat + ")"
	case AblationFile:
		return "want " + AblationFile + " of uhno ablate (format " + eval.AblationFormat + ")"
	}
	return "want " + ResultsFile + " (" + evalFormat + "), " + AblationFile + " (" + eval.AblationFormat + ") or a bench JSON (" + benchFormat + ")"
}

// readFile reads one JSON file and files it by its format. strict: the
// file was named on the command line or has a name this package reads,
// so that a file that does not parse is an error; otherwise (another
// .json in a run directory) only a bench report is taken and the rest
// ignored.
func (in *inputs) readFile(path string, strict bool) (bool, error) {
	if in.files[filepath.Clean(path)] {
		return true, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("report: %s: %v", path, err)
	}
	name := filepath.Base(path)
	var head struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		if !strict {
			return false, nil
		}
		if !strings.HasSuffix(name, ".json") {
			return false, nil
		}
		return false, fmt.Errorf("report: %s: %s; %s", path, jsonError(raw, err), expected(name))
	}
	if head.Format == evalFormat || head.Format == eval.AblationFormat || head.Format == benchFormat {
		in.files[filepath.Clean(path)] = true
	}
	switch {
	case head.Format == evalFormat:
		return true, in.readEval(path, raw)
	case head.Format == eval.AblationFormat:
		return true, in.readAblation(path, raw)
	case head.Format == benchFormat:
		return true, in.readBench(path, raw)
	case !strict:
		return false, nil
	case name == ResultsFile || name == AblationFile:
		return false, fmt.Errorf("report: %s: format %q; %s", path, head.Format, expected(name))
	case strings.HasSuffix(name, ".json"):
		return false, fmt.Errorf("report: %s: format %q; %s", path, head.Format, expected(""))
	}
	return false, nil
}

// jsonError describes a decoding error with the line and column it is at.
func jsonError(raw []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	offset := int64(-1)
	switch {
	case errors.As(err, &syn):
		offset = syn.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	}
	msg := strings.TrimPrefix(err.Error(), "json: ")
	if offset < 0 {
		return "invalid JSON (" + msg + ")"
	}
	offset = min(offset, int64(len(raw)))
	line := 1 + bytes.Count(raw[:offset], []byte{'\n'})
	col := offset - int64(bytes.LastIndexByte(raw[:offset], '\n')) - 1
	return fmt.Sprintf("invalid JSON at line %d, column %d (%s)", line, col, msg)
}

func decode(path string, raw []byte, dst any, want string) error {
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("report: %s: %s; %s", path, jsonError(raw, err), want)
	}
	return nil
}

func (in *inputs) readEval(path string, raw []byte) error {
	var res eval.Results
	if err := decode(path, raw, &res, expected(ResultsFile)); err != nil {
		return err
	}
	bad := func(what string) error {
		return fmt.Errorf("report: %s: %s; %s", path, what, expected(ResultsFile))
	}
	switch {
	case !slices.Contains(config.TaskNames(), res.Task):
		return bad(fmt.Sprintf("task %q is not one of %s", res.Task, strings.Join(config.TaskNames(), ", ")))
	case len(res.Models) == 0:
		return bad("no models")
	}
	for i, m := range res.Models {
		if len(m.Eval.Metrics) == 0 {
			return bad(fmt.Sprintf("models[%d] (%q) has no evaluation metrics", i, m.Label))
		}
	}
	if res.HorizonMult < 1 {
		res.HorizonMult = 1
	}
	described := false
	for _, m := range res.Models {
		described = described || m.Config.Data.Source == config.SourceDescribed
	}
	in.evals = append(in.evals, evalInput{file: path, res: res, described: described})
	in.used = append(in.used, Input{Path: filepath.Dir(path), File: path, Kind: KindEval})
	return nil
}

func (in *inputs) readAblation(path string, raw []byte) error {
	var ab eval.Ablation
	if err := decode(path, raw, &ab, expected(AblationFile)); err != nil {
		return err
	}
	bad := func(what string) error {
		return fmt.Errorf("report: %s: %s; %s", path, what, expected(AblationFile))
	}
	switch {
	case !slices.Contains(config.TaskNames(), ab.Task):
		return bad(fmt.Sprintf("task %q is not one of %s", ab.Task, strings.Join(config.TaskNames(), ", ")))
	case ab.Kind != "modes" && ab.Kind != "sweep":
		return bad(fmt.Sprintf("kind %q, want \"modes\" or \"sweep\"", ab.Kind))
	case ab.Kind == "sweep" && ab.SweepKey == "":
		return bad("a sweep without sweep_key")
	case len(ab.Entries) == 0:
		return bad("no entries")
	}
	for i, e := range ab.Entries {
		if len(e.Eval.Metrics) == 0 {
			return bad(fmt.Sprintf("entries[%d] (%q) has no evaluation metrics", i, e.Label))
		}
	}
	in.ablations = append(in.ablations, ablationInput{file: path, ab: ab})
	in.used = append(in.used, Input{Path: filepath.Dir(path), File: path, Kind: KindAblation})
	return nil
}

func (in *inputs) readBench(path string, raw []byte) error {
	var rep bench.Report
	if err := decode(path, raw, &rep, "want the JSON of uhno bench --json (format "+benchFormat+")"); err != nil {
		return err
	}
	if len(rep.Results) == 0 {
		return fmt.Errorf("report: %s: no results; want the JSON of uhno bench --json (format %s)", path, benchFormat)
	}
	in.benches = append(in.benches, benchInput{file: path, rep: rep})
	in.used = append(in.used, Input{Path: path, File: path, Kind: KindBench})
	return nil
}

// readTrain reads a training run: its latest checkpoint's state and
// build record, and its log (runrec).
func (in *inputs) readTrain(dir string) error {
	st, ckpt, err := train.ReadState(dir)
	if err != nil {
		return fmt.Errorf("report: training run %s: %s", dir, strings.TrimPrefix(err.Error(), "train: "))
	}
	// A run whose record does not decode is still reported; it only
	// lacks the notes the record gives (the width U-HNO was built with).
	rec, _ := runrec.DecodeRecord(ckpt, st.Build)
	path := filepath.Join(dir, train.LogFile)
	var log []train.LogRecord
	_, err = runrec.ScanLog(path, func(_ int, line []byte) error {
		var r train.LogRecord
		if err := json.Unmarshal(line, &r); err != nil {
			return errors.New(strings.Replace(jsonError(line, err), "at line 1, column", "at column", 1))
		}
		if r.Kind == train.KindTrain || r.Kind == train.KindVal { // others (probe records) are for package dynamics
			log = append(log, r)
		}
		return nil
	})
	if le := (*runrec.LineError)(nil); errors.As(err, &le) {
		return fmt.Errorf("report: %s: line %d: %v; want the JSON-lines log of uhno train", le.Path, le.Line, le.Err)
	} else if err != nil {
		return fmt.Errorf("report: %s: %v", path, err)
	}
	in.trains = append(in.trains, trainInput{dir: dir, state: st, rec: rec, ckpt: ckpt, log: log})
	in.used = append(in.used, Input{Path: dir, File: path, Kind: KindTrain})
	return nil
}
