package reproduce

import (
	"fmt"
	"slices"
	"strings"
)

// Schedules: the named training schedules of uhno reproduce (--schedule)
// and how a run's steps follow from one.

// Schedule is a named training schedule: the optimizer steps of every run
// (0: each task's configuration, configs/<task>.yaml) with the warm-up
// scaled to them as uhno train scales it (the paper's 1,000 of 20,000).
type Schedule struct {
	Name, About string
	Steps       int
}

// Schedules are the named schedules --schedule accepts; the first is the
// default. cpu5k is the schedule that fits a 2-core machine
// (docs/DECISIONS.md, D-reproduce-cpu5k).
var Schedules = []Schedule{
	{"paper", "each task's configs/<task>.yaml: 20,000 steps, warm-up 1,000, cosine (Sec. 4.1)", 0},
	{"cpu5k", "5,000 steps, warm-up 250 (the paper's 5%), cosine: a quarter of the paper's training, for CPU machines", 5000},
}

// ScheduleNames lists the schedules' names.
func ScheduleNames() []string {
	var out []string
	for _, s := range Schedules {
		out = append(out, s.Name)
	}
	return out
}

// schedule returns the steps every run trains (0: the configuration's)
// and a description.
func (o *RunOptions) schedule() (int, string, error) {
	name := o.Schedule
	if name == "" {
		name = Schedules[0].Name
	}
	i := slices.IndexFunc(Schedules, func(s Schedule) bool { return s.Name == name })
	if i < 0 {
		return 0, "", fmt.Errorf("reproduce: --schedule %q: want one of %s", o.Schedule, strings.Join(ScheduleNames(), ", "))
	}
	s := Schedules[i]
	if o.Steps > 0 {
		return o.Steps, fmt.Sprintf("--steps %d (warm-up scaled from each task's configuration)", o.Steps), nil
	}
	return s.Steps, s.Name + ": " + s.About, nil
}
