// Package objective is a service-level objective over a point's summary:
// the ceiling of an open-loop scenario (rooms: users sending at a fixed
// rate) is the largest load that still meets it, not the highest
// throughput.
//
// An objective is a list of conditions, each a path into the generator's
// summary (load.Summary as JSON), a comparison and a bound:
//
//	kinds.op.latency_ns.p99 <= 100ms, kinds.op.delivered_pct >= 99.9
//
// Paths are dotted JSON member names, so the harness evaluates an
// objective without knowing the scenario that wrote the summary. A bound
// may carry a duration unit (ns, us, µs, ms, s: compared in nanoseconds,
// so the path should name a *_ns figure) or a percent sign (a plain
// number). A condition whose path is not in the summary is not met and
// says so: an objective that cannot be checked is never passed.
package objective

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Condition is one bound on one figure.
type Condition struct {
	Path  string  `json:"path"`
	Op    string  `json:"op"` // <= < >= > ==
	Bound float64 `json:"bound"`
	Text  string  `json:"text"` // as written
}

// Objective is every condition, all of which must hold.
type Objective []Condition

// Parse reads "path op bound, ...". Errors name the condition.
func Parse(s string) (Objective, error) {
	var o Objective
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		c, err := parseCondition(part)
		if err != nil {
			return nil, fmt.Errorf("condition %d %q: %w", i+1, part, err)
		}
		o = append(o, c)
	}
	if len(o) == 0 && strings.TrimSpace(s) != "" {
		return nil, errors.New("no condition")
	}
	return o, nil
}

var ops = []string{"<=", ">=", "==", "<", ">"} // two-character ones first

func parseCondition(s string) (Condition, error) {
	for _, op := range ops {
		i := strings.Index(s, op)
		if i < 0 {
			continue
		}
		path := strings.TrimSpace(s[:i])
		bound := strings.TrimSpace(s[i+len(op):])
		if path == "" {
			return Condition{}, errors.New("no path before " + op)
		}
		for _, seg := range strings.Split(path, ".") {
			if seg == "" || strings.ContainsAny(seg, " \t<>=") {
				return Condition{}, fmt.Errorf("path %q: want dotted names like kinds.op.latency_ns.p99", path)
			}
		}
		v, err := parseBound(bound)
		if err != nil {
			return Condition{}, err
		}
		return Condition{Path: path, Op: op, Bound: v, Text: s}, nil
	}
	return Condition{}, errors.New("no comparison (<=, <, >=, >, ==)")
}

func parseBound(s string) (float64, error) {
	if s == "" {
		return 0, errors.New("no bound")
	}
	if strings.HasSuffix(s, "%") {
		s = strings.TrimSpace(strings.TrimSuffix(s, "%"))
	} else if last := s[len(s)-1]; last == 's' {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("bound %q: %w", s, err)
		}
		return float64(d.Nanoseconds()), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("bound %q: want a finite number, a duration (100ms) or a percentage", s)
	}
	return v, nil
}

// String writes the objective as Parse reads it.
func (o Objective) String() string {
	parts := make([]string, len(o))
	for i, c := range o {
		parts[i] = c.Text
	}
	return strings.Join(parts, ", ")
}

// Result is an objective evaluated on one point.
type Result struct {
	Met        bool        `json:"met"`
	Conditions []Evaluated `json:"conditions"`
}

// Evaluated is one condition on one point. Got is nil when the path was
// not in the summary.
type Evaluated struct {
	Condition
	Got *float64 `json:"got"`
	Met bool     `json:"met"`
	Why string   `json:"why,omitempty"`
}

// Eval evaluates o on a summary (anything that marshals to a JSON object,
// usually load.Summary). An empty objective is met.
func (o Objective) Eval(summary any) (Result, error) {
	b, err := json.Marshal(summary)
	if err != nil {
		return Result{}, err
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return Result{}, fmt.Errorf("summary is not a JSON object: %w", err)
	}
	r := Result{Met: true}
	for _, c := range o {
		e := Evaluated{Condition: c}
		v, why := lookup(doc, c.Path)
		if why != "" {
			e.Why = why
		} else {
			e.Got = &v
			e.Met = compare(v, c.Op, c.Bound)
			if !e.Met {
				e.Why = fmt.Sprintf("%s is %s", c.Path, formatValue(c.Path, v))
			}
		}
		r.Met = r.Met && e.Met
		r.Conditions = append(r.Conditions, e)
	}
	return r, nil
}

func lookup(doc map[string]any, path string) (float64, string) {
	var cur any = doc
	for _, seg := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, fmt.Sprintf("%s: not in the point's summary", path)
		}
		if cur, ok = m[seg]; !ok {
			return 0, fmt.Sprintf("%s: not in the point's summary", path)
		}
	}
	v, ok := cur.(float64)
	if !ok {
		return 0, fmt.Sprintf("%s: not a number in the point's summary", path)
	}
	return v, ""
}

func compare(v float64, op string, bound float64) bool {
	switch op {
	case "<=":
		return v <= bound
	case "<":
		return v < bound
	case ">=":
		return v >= bound
	case ">":
		return v > bound
	case "==":
		return v == bound
	}
	return false
}

// Reasons lists the conditions not met, for a point's verdict line.
func (r Result) Reasons() string {
	var out []string
	for _, e := range r.Conditions {
		if !e.Met {
			out = append(out, e.Why)
		}
	}
	return strings.Join(out, "; ")
}

// formatValue writes a figure for a reason: a nanosecond figure (a path
// through a *_ns member) as a duration, anything else as a number.
func formatValue(path string, v float64) string {
	for _, seg := range strings.Split(path, ".") {
		if strings.HasSuffix(seg, "_ns") && math.Abs(v) < math.MaxInt64 {
			return time.Duration(int64(v)).String()
		}
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
