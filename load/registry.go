package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"sort"
	"sync"

	"github.com/ceiling-bench/ceiling/internal/wire"
	"github.com/ceiling-bench/ceiling/load/payload"
)

// Definition is one scenario as the engine, the CLI and the harness see it.
// A scenario is one package (load/scenario/<name>) that calls Register from
// an init function; load/scenario/all imports every one of them, so adding
// a scenario is one package and one import line there.
//
// The engine knows no protocol: it builds the payload pool, connects with
// the configured strategy, opens the window and merges the recorders. What
// the knobs mean, how a connection is made ready, what a message is and what
// the summary says beyond the common figures all belong to the scenario.
type Definition struct {
	Name string
	Help string // one line: what it drives

	// DefaultURL is used when --url is not given ("" : --url is required).
	DefaultURL string

	// NewParams returns the scenario's own knobs with their defaults.
	NewParams func() Params

	// Report returns the scenario's warnings (printed first, in capitals
	// where they weaken the figures) and its rows of the report table,
	// from the result alone. Nil: none.
	Report func(res *Result) (warnings []string, rows []ReportRow)

	// Target describes the scenario's block of a harness target file.
	// Nil: the scenario cannot be swept from a target file.
	Target *TargetDef

	// Fault says the scenario can measure the harness's FAULT (one
	// server of several killed or frozen inside the window). Nil: it
	// cannot.
	Fault *FaultDef
}

// FaultDef is a scenario's part in a resilience point (the harness's
// FAULT): it drives several servers at once, splits each one's
// accounting at a fraction of the window, and lists them in its summary
// block as "servers" (ServerShare, with Before and After) beside
// "split_at_ns", which the harness reads without knowing the scenario
// (Summary.ServerShares, Summary.SplitAtNs).
type FaultDef struct {
	// SplitArgs are the scenario's own `ceiling load` flags that split
	// the accounting at fraction (0 < fraction < 1) of the window
	// (fanout: --split-at).
	SplitArgs func(fraction float64) []string
}

// FaultScenarios lists the registered scenarios that can measure a FAULT
// (Definition.Fault), sorted.
func FaultScenarios() []string {
	var names []string
	for _, d := range Scenarios() {
		if d.Fault != nil {
			names = append(names, d.Name)
		}
	}
	return names
}

// Params are a scenario's own knobs: its flags, their validation and the
// driver built from them. They are recorded in the result under
// config.params, so they must marshal to JSON (a secret is tagged
// `json:"-"`).
type Params interface {
	// Flags binds the scenario's flags to the Params.
	Flags(fs *flag.FlagSet)
	// Validate checks the Params against the common knobs; given reports
	// whether a flag was set on the command line. Errors name the flag.
	Validate(c *Config, given func(flag string) bool) error
	// New builds the driver for one run.
	New(c *Config, pool *payload.Pool) (Scenario, error)
}

// TargetDef is the scenario's block of a harness target file
// (benchmark/targets/*.json). The harness stores the block's raw JSON under
// Key and passes it back here without knowing what it means.
type TargetDef struct {
	// Key is the block's top-level key in the target file ("echo_url",
	// "fanout", "script").
	Key string
	// Parse checks the block; errors name the field below Key.
	Parse func(raw json.RawMessage) (TargetBlock, error)
	// FromURL, when not nil, makes a whole block from a URL alone (echo),
	// so `ceiling sweep --url` works with a target that has no block.
	FromURL func(url string) json.RawMessage
	// WithFile, when not nil, returns the block with its scenario file
	// replaced (SCENARIO_FILE; raw is nil when the target has no block):
	// the scenario that reads declarative files.
	WithFile func(raw json.RawMessage, file string) (json.RawMessage, error)
	// BatchLadder, when not nil, replaces the harness's default batch
	// ladder for this scenario (fanout: events per publish request).
	BatchLadder []int
	// BatchNote says why, for the result's notes.
	BatchNote string
}

// TargetBlock is one parsed target block. Every string may hold the
// harness's placeholders ({addr}, {port}, {host}); the harness expands
// them per point.
type TargetBlock interface {
	// URL is the --url the generator is given; URLField names it in
	// errors ("echo_url", "fanout.url").
	URL() string
	URLField() string
	// Args are the scenario's own `ceiling load` flags for every point.
	Args() []string
	// Secrets are values never to be written anywhere, by their field
	// below the block's key ("secret" names fanout.secret).
	Secrets() map[string]string
	// CheckLadder checks the block against the smallest connection count
	// the sweep will use; errors name the field.
	CheckLadder(minConnections int) error
}

// MultiURLBlock is a TargetBlock that names several servers (the nats
// block's "urls"): URL is the first, and Args carry a --url for each of
// the rest. The harness checks every one takes the point's address.
type MultiURLBlock interface {
	URLs() []string
}

// LadderBlock is a TargetBlock that brings its own connection ladder (a
// scenario file's "sweep"), used when the sweep is given none for the
// batch. Nil: none.
type LadderBlock interface {
	ConnsLadder(quick bool) []int
}

// FileScenario is the registered scenario that reads scenario files
// (TargetDef.WithFile), if any.
func FileScenario() (Definition, bool) {
	for _, d := range Scenarios() {
		if d.Target != nil && d.Target.WithFile != nil {
			return d, true
		}
	}
	return Definition{}, false
}

// ObjectiveBlock is a TargetBlock that brings a default objective (a
// scenario file's own), used when the sweep is given none (OBJECTIVE).
type ObjectiveBlock interface {
	Objective() string
}

// EnvBlock is a block whose scenario reads variables of the generator's
// environment (a scenario file's {env:NAME} headers and signing keys).
// In a sweep the generator gets only the variables the target's pass_env
// names, so the harness checks these are among them.
type EnvBlock interface {
	EnvNames() []string
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Definition{}
)

// Register adds a scenario. It panics on a duplicate or incomplete
// definition: both are programming errors found at init.
func Register(d Definition) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if d.Name == "" || d.NewParams == nil {
		panic("load.Register: a scenario needs a Name and NewParams")
	}
	if _, dup := registry[d.Name]; dup {
		panic("load.Register: scenario " + d.Name + " registered twice")
	}
	if d.Target != nil && (d.Target.Key == "" || d.Target.Parse == nil) {
		panic("load.Register: scenario " + d.Name + ": Target needs Key and Parse")
	}
	if d.Fault != nil && d.Fault.SplitArgs == nil {
		panic("load.Register: scenario " + d.Name + ": Fault needs SplitArgs")
	}
	registry[d.Name] = d
	wire.AddScenario(d.Name)
}

// Lookup returns the named scenario.
func Lookup(name string) (Definition, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	d, ok := registry[name]
	return d, ok
}

// Scenarios lists every registered scenario by name.
func Scenarios() []Definition {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]Definition, 0, len(registry))
	for _, d := range registry {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ScenarioNames lists the registered names, sorted (wire.ScenarioNames:
// the knobs read them there).
func ScenarioNames() []string { return wire.ScenarioNames() }

// UnknownScenarioError is a --scenario no package registered.
type UnknownScenarioError struct{ Name string }

func (e *UnknownScenarioError) Error() string {
	return fmt.Sprintf("--scenario %q: want one of %v", e.Name, ScenarioNames())
}

// lookupParams returns the scenario's definition, or a typed error.
func lookupScenario(name string) (Definition, error) {
	d, ok := Lookup(name)
	if !ok {
		return Definition{}, &UnknownScenarioError{Name: name}
	}
	return d, nil
}

// DecodeStrict decodes one JSON value into v, refusing unknown fields and
// trailing data: a block a scenario's TargetDef.Parse reads.
func DecodeStrict(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// FieldError is a bad field of a scenario's block (of a target file, or of
// a scenario file): Field is its path below the block ("channels",
// "roles[1].share"), which the caller prefixes with the block's own name.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Fieldf is a FieldError with a formatted message.
func Fieldf(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// ServerURLs is the url/urls pair of a target block that drives one
// server or several nodes of one cluster (nats, fanout): embed it, and
// call Check from the block's parse. The block's key names its fields in
// errors.
type ServerURLs struct {
	WSURL  string   `json:"url,omitempty"`
	WSURLs []string `json:"urls,omitempty"`
}

// Check refuses both fields or neither, and an empty entry of urls.
func (u ServerURLs) Check() []error {
	var errs []error
	switch {
	case u.WSURL != "" && len(u.WSURLs) > 0:
		errs = append(errs, Fieldf("urls", "give url (one server) or urls (several nodes of one cluster), not both"))
	case u.WSURL == "" && len(u.WSURLs) == 0:
		errs = append(errs, Fieldf("url", "empty"))
	}
	for i, s := range u.WSURLs {
		if s == "" {
			errs = append(errs, Fieldf(fmt.Sprintf("urls[%d]", i), "empty"))
		}
	}
	return errs
}

// URL is url, or the first of urls.
func (u ServerURLs) URL() string {
	if len(u.WSURLs) > 0 {
		return u.WSURLs[0]
	}
	return u.WSURL
}

// URLs are every server's URL (MultiURLBlock).
func (u ServerURLs) URLs() []string {
	if len(u.WSURLs) > 0 {
		return u.WSURLs
	}
	return []string{u.WSURL}
}

// MoreURLArgs are a --url for each of urls but the first (the harness
// passes that one).
func (u ServerURLs) MoreURLArgs() []string {
	var a []string
	for i, s := range u.WSURLs {
		if i > 0 {
			a = append(a, "--url", s)
		}
	}
	return a
}

// URLFieldOf names URL in errors, under the block's key.
func (u ServerURLs) URLFieldOf(key string) string {
	if len(u.WSURLs) > 0 {
		return key + ".urls[0]"
	}
	return key + ".url"
}
