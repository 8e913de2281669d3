package script

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/ceiling-bench/ceiling/load"
)

// Name is the scenario's registered name (`--scenario script`) and its
// target block's key.
const Name = "script"

// Summary block keys.
const (
	BlockKinds     = "kinds"              // summary.kinds.<kind>: KindSummary
	BlockUnmatched = "unmatched_messages" // messages in the window no entry of the file matched
)

// DefaultURL is refserver's default address: the rooms file's server.
const DefaultURL = "ws://127.0.0.1:6001"

func init() {
	load.Register(load.Definition{
		Name:       Name,
		Help:       "a declarative scenario file (--scenario-file, docs/scenarios.md): any JSON-over-WebSocket protocol",
		DefaultURL: DefaultURL,
		NewParams:  func() load.Params { return &Params{} },
		Report:     report,
		Target: &load.TargetDef{
			Key:         Name,
			Parse:       parseTarget,
			WithFile:    withFile,
			BatchLadder: []int{1},
			BatchNote:   "a scenario file sends one message per send: the load grows with connections",
		},
	})
}

// report warns about kinds that did not all arrive and lists every kind.
func report(res *load.Result) (warnings []string, rows []load.ReportRow) {
	var kinds map[string]*KindSummary
	if ok, err := res.Summary.Block(BlockKinds, &kinds); !ok || err != nil {
		return nil, nil
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		k := kinds[name]
		if k.DeliveredPct != nil && *k.DeliveredPct < 100 {
			warnings = append(warnings, fmt.Sprintf("UNDELIVERED: %s: %.2f%% of %d expected arrived before the drain ended", name, *k.DeliveredPct, *k.Expected))
		}
		if k.Gaps > 0 {
			warnings = append(warnings, fmt.Sprintf("GAPS: %s: %d values missing from the version sequence", name, k.Gaps))
		}
		v := fmt.Sprintf("%s: sent %d, received %d", k.Type, k.Sent, k.Received)
		if k.Expected != nil {
			v += fmt.Sprintf(" of %d expected", *k.Expected)
		}
		if k.RateLimited > 0 {
			v += fmt.Sprintf(", %d rate limited", k.RateLimited)
		}
		if k.Latency.Count > 0 {
			v += "; " + load.LatencyLine(k.Latency)
		}
		rows = append(rows, load.ReportRow{Name: "kind " + name, Value: v})
	}
	var unmatched int64
	if ok, _ := res.Summary.Block(BlockUnmatched, &unmatched); ok && unmatched > 0 {
		warnings = append(warnings, fmt.Sprintf("UNMATCHED: %d messages matched no entry of the scenario file", unmatched))
	}
	return warnings, rows
}

// Target is the scenario's block of a harness target file:
//
//	"script": {"url": "ws://{addr}", "file": "benchmark/scenarios/rooms.json"}
//
// Signing keys stay in the environment (the file's key_env), never in a
// target.
type Target struct {
	WSURL string `json:"url"`
	File  string `json:"file,omitempty"`

	spec *Spec // File, parsed once by parseTarget (nil without a file, or when it did not parse)
}

var _ load.ObjectiveBlock = (*Target)(nil)

func parseTarget(raw json.RawMessage) (load.TargetBlock, error) {
	var t Target
	if err := load.DecodeStrict(raw, &t); err != nil {
		return nil, err
	}
	var errs []error
	if t.WSURL == "" {
		errs = append(errs, load.Fieldf("url", "required"))
	}
	if t.File != "" {
		s, err := ParseFile(t.File)
		if err != nil {
			errs = append(errs, &load.FieldError{Field: "file", Err: err})
		}
		t.spec = s
	}
	return &t, errors.Join(errs...)
}

// EnvNames are the variables the file reads from the environment, sorted
// (load.EnvBlock): every {env:NAME} in it, and every sign.key_env.
func (t *Target) EnvNames() []string {
	if t.spec == nil {
		return nil
	}
	return t.spec.EnvNames
}

// withFile is SCENARIO_FILE: the block's file replaced (a block made with
// the default URL when the target has none).
func withFile(raw json.RawMessage, file string) (json.RawMessage, error) {
	t := Target{WSURL: DefaultURL}
	if raw != nil {
		if err := load.DecodeStrict(raw, &t); err != nil {
			return nil, err
		}
	}
	t.File = file
	return json.Marshal(t)
}

// ConnsLadder is the file's connection ladder ("sweep"), nil without one
// (load.LadderBlock).
func (t *Target) ConnsLadder(quick bool) []int {
	s := t.spec
	if s == nil {
		return nil
	}
	if quick && s.QuickLadder != nil {
		return s.QuickLadder
	}
	return s.Ladder
}

// URL is the server's base URL ({url} in the file).
func (t *Target) URL() string { return t.WSURL }

// URLField names URL in errors.
func (t *Target) URLField() string { return Name + ".url" }

// Args name the file.
func (t *Target) Args() []string {
	if t.File == "" {
		return nil
	}
	return []string{"--scenario-file", t.File}
}

// Objective is the file's own objective, the sweep's default when it is
// given none (load.ObjectiveBlock).
func (t *Target) Objective() string {
	if t.spec == nil {
		return ""
	}
	return t.spec.Objective
}

// Secrets: none (keys are read from the environment).
func (t *Target) Secrets() map[string]string { return nil }

// CheckLadder refuses a smallest rung the roles' counts do not fit.
func (t *Target) CheckLadder(minConnections int) error {
	if t.File == "" {
		return load.Fieldf("file", "no scenario file: name one here, or give SCENARIO_FILE (or SCENARIO=<a file in benchmark/scenarios>)")
	}
	if t.spec == nil {
		_, err := ParseFile(t.File) // parseTarget refused it already; say why again
		return &load.FieldError{Field: "file", Err: err}
	}
	if _, err := assignRoles(t.spec, minConnections); err != nil {
		return load.Fieldf("file", "%s: %v, more than the %d connections of the smallest rung", t.File, err, minConnections)
	}
	return nil
}
