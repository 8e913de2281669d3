package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/runas"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
)

// resolveKnobs fills what the knobs left open and validates every knob
// together (ResolveKnobs). available is the CPUs this process may run on
// (its own affinity); default sets are carved from it. Each error names
// the knob as both its variable and its flag, since either may have set
// it. Every knob's own Check (harness/knob) runs here; what is left below is
// what depends on several knobs together.
func (o *draft) resolveKnobs(available pinning.CPUSet) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }

	if err := o.resolveScenarioFile(); err != nil {
		errs = append(errs, err)
	}
	// Each knob's own range (harness/knob): whichever layer set the value.
	errs = append(errs, o.CheckKnobs()...)
	if d, ok := load.Lookup(o.Scenario); ok && d.Target != nil && d.Target.BatchLadder != nil &&
		(slices.Equal(o.BatchLadder, knob.DefaultBatchLadder) || slices.Equal(o.BatchLadder, knob.QuickBatchLadder)) {
		o.BatchLadder = slices.Clone(knob.Ladder(d.Target.BatchLadder))
		o.Notes = append(o.Notes, fmt.Sprintf("%s: batch ladder %q (%s)", o.Scenario, o.BatchLadder.String(), d.Target.BatchNote))
		if o.HeadlineBatch == knob.DefaultHeadlineBatch && !o.BatchLadder.Contains(o.HeadlineBatch) {
			o.HeadlineBatch = o.BatchLadder[0]
			o.Notes = append(o.Notes, fmt.Sprintf("%s: headline batch %d", o.Scenario, o.HeadlineBatch))
		}
	}
	if len(o.BatchLadder) == 0 {
		bad("BATCH_LADDER (--batch-ladder): empty")
	}
	if !o.BatchLadder.Contains(o.HeadlineBatch) {
		bad("HEADLINE_BATCH (--headline-batch): %d is not a rung of BATCH_LADDER %q", o.HeadlineBatch, o.BatchLadder.String())
	}
	for b := range o.ConnsLadders {
		if !o.BatchLadder.Contains(b) {
			o.Notes = append(o.Notes, fmt.Sprintf("CONNS_LADDER_%d is set but %d is not in BATCH_LADDER %q: ignored", b, b, o.BatchLadder.String()))
		}
	}
	// The generator's limits (load.Validate; a GENERATOR honours the same
	// contract): refused here, or every point would fail after its boot.
	// RECORD_SIZE alone is its knob's Check.
	if o.RecordSize > 0 && o.RecordSize <= load.MaxRecordSize {
		for _, b := range o.BatchLadder {
			if int64(b)*int64(o.RecordSize) > load.MaxBatchBytes {
				bad("BATCH_LADDER (--batch-ladder) x RECORD_SIZE (--record-size): batch %d x %d B is above the generator's limit of %d bytes per write", b, o.RecordSize, load.MaxBatchBytes)
				break
			}
		}
	}
	errs = append(errs, o.resolveAgentsToken())
	errs = append(errs, o.resolveAgentsTLS())
	var err error
	o.RunAs, err = runas.Resolve(o.ServerUser)
	errs = append(errs, err)
	errs = append(errs, o.checkConnKnobs())
	errs = append(errs, o.checkLimits(nil, nil, machineLimits))
	errs = append(errs, o.resolveCalibration())
	errs = append(errs, o.resolveCompare())
	if err := o.resolveCPUs(available); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, o.resolveDuet(available))
	}
	return errors.Join(errs...)
}

// resolveCPUs picks sets for the cores present when none were given (the
// generator gets the first CPU, the server the rest; one CPU: both share it,
// with a warning) and refuses an overlap unless it was allowed.
func (o *draft) resolveCPUs(available pinning.CPUSet) error {
	srv, gen := o.ServerCPUs, o.GeneratorCPUs
	switch {
	case len(srv) == 0 && len(gen) == 0:
		switch len(available) {
		case 0:
			return errors.New("SRV_CPUSET, LT_CPUSET: not set, and this process's CPU affinity is unknown: set both")
		case 1:
			srv, gen = slices.Clone(available), slices.Clone(available)
			o.AllowOverlap = true
			o.Notes = append(o.Notes, fmt.Sprintf("only CPU %d is available: server and generator share it (overlap), so the generator steals server CPU", available[0]))
		default:
			gen, srv = available[:1:1], slices.Clone(available[1:])
		}
		o.Notes = append(o.Notes, fmt.Sprintf("SRV_CPUSET and LT_CPUSET not set: picked server %s, generator %s for the %d CPUs present",
			srv, gen, len(available)))
	case len(gen) == 0:
		for _, c := range available {
			if !slices.Contains(srv, c) {
				gen = pinning.CPUSet{c}
				break
			}
		}
		if len(gen) == 0 {
			return fmt.Errorf("LT_CPUSET: not set and SRV_CPUSET %s leaves no CPU of %s for the generator", srv, available)
		}
		o.Notes = append(o.Notes, fmt.Sprintf("LT_CPUSET not set: picked %s", gen))
	case len(srv) == 0:
		for _, c := range available {
			if !slices.Contains(gen, c) {
				srv = append(srv, c)
			}
		}
		if len(srv) == 0 {
			return fmt.Errorf("SRV_CPUSET: not set and LT_CPUSET %s leaves no CPU of %s for the server", gen, available)
		}
		o.Notes = append(o.Notes, fmt.Sprintf("SRV_CPUSET not set: picked %s", srv))
	}
	o.ServerCPUs, o.GeneratorCPUs = srv, gen
	if shared := pinning.Overlap(srv, gen); len(shared) > 0 && !o.AllowOverlap {
		return fmt.Errorf("SRV_CPUSET %s and LT_CPUSET %s overlap on %s: the generator would steal server CPU (pass --allow-overlap or ALLOW_OVERLAP=1 to run anyway)",
			srv, gen, shared)
	}
	return nil
}

// resolveScenarioFile turns SCENARIO=<a file in ScenarioDir> and
// SCENARIO_FILE into the scenario that reads files, and refuses a file
// with a scenario that does not.
func (o *draft) resolveScenarioFile() error {
	fd, hasFiles := load.FileScenario()
	if _, registered := load.Lookup(o.Scenario); !registered && o.ScenarioFile == "" {
		path := filepath.Join(knob.ScenarioDir, o.Scenario+".json")
		if _, err := os.Stat(path); err == nil && hasFiles {
			o.Notes = append(o.Notes, fmt.Sprintf("SCENARIO=%s: the scenario file %s (--scenario %s)", o.Scenario, path, fd.Name))
			o.ScenarioFile, o.Scenario = path, fd.Name
		}
		return nil // else SCENARIO's own check names it
	}
	if o.ScenarioFile == "" {
		return nil
	}
	if !hasFiles {
		return errors.New("SCENARIO_FILE (--scenario-file): no registered scenario reads scenario files")
	}
	if o.Scenario == knob.DefaultScenario {
		o.Scenario = fd.Name
	}
	if o.Scenario != fd.Name {
		return fmt.Errorf("SCENARIO_FILE (--scenario-file): read by SCENARIO=%s, not %s", fd.Name, o.Scenario)
	}
	if _, err := os.Stat(o.ScenarioFile); err != nil {
		return fmt.Errorf("SCENARIO_FILE (--scenario-file): %w", err)
	}
	return nil
}

// ResolveCPUs fills and checks SRV_CPUSET and LT_CPUSET alone, as Resolve
// does (`ceiling calibrate` needs the two sets and nothing else), and
// returns the notes that say how it picked them.
func ResolveCPUs(o *knob.Options, available pinning.CPUSet) ([]string, error) {
	p := &draft{Options: *o}
	err := p.resolveCPUs(available)
	*o = p.Options
	return p.Notes, err
}

// resolveAgentsToken requires a token of AGENTS_LISTEN, from AGENTS_TOKEN
// or AGENTS_TOKEN_FILE (read here, once): a coordinator admits no agent
// that cannot prove one, on the loopback too, where any local user could
// otherwise join. Without AGENTS_LISTEN a token is refused rather than
// ignored: the harness's own agents get a fresh one per point.
func (o *draft) resolveAgentsToken() error {
	const both = "AGENTS_TOKEN and AGENTS_TOKEN_FILE (--agents-token-file)"
	switch {
	case o.AgentsListen == "" && (o.AgentsToken != "" || o.AgentsTokenFile != ""):
		return fmt.Errorf("%s: only AGENTS_LISTEN's remote agents take a token (the harness's own agents get a fresh one per point); unset it", both)
	case o.AgentsListen == "":
		return nil
	case o.AgentsToken != "" && o.AgentsTokenFile != "":
		return fmt.Errorf("%s: both set; give one", both)
	case o.AgentsTokenFile != "":
		t, err := agents.ReadTokenFile(o.AgentsTokenFile)
		if err != nil {
			return fmt.Errorf("AGENTS_TOKEN_FILE (--agents-token-file): %w", err)
		}
		o.AgentsToken = knob.Secret(t.Text())
	case o.AgentsToken == "":
		return fmt.Errorf("AGENTS_LISTEN (--agents-listen) %s: needs AGENTS_TOKEN or AGENTS_TOKEN_FILE (--agents-token-file): the coordinator admits only agents that prove the token (docs/agents.md, \"Authentication\")", o.AgentsListen)
	}
	return nil
}

// resolveAgentsTLS checks AGENTS_TLS_CERT, _KEY and _CA by loading them
// as the coordinator will: with AGENTS_LISTEN only, all three or none,
// each file's fault named by its knob.
func (o *draft) resolveAgentsTLS() error {
	files := agents.TLSFiles{Cert: o.AgentsTLSCert, Key: o.AgentsTLSKey, CA: o.AgentsTLSCA}
	if files.IsZero() {
		return nil
	}
	if o.AgentsListen == "" {
		return errors.New("AGENTS_TLS_CERT, AGENTS_TLS_KEY and AGENTS_TLS_CA (--agents-tls-*): only AGENTS_LISTEN's remote agents use TLS (the harness's own agents are on this machine); unset them")
	}
	_, err := files.ServerConfig()
	var fe *agents.TLSFileError
	if errors.As(err, &fe) {
		knob := map[string]string{"cert": "AGENTS_TLS_CERT (--agents-tls-cert)", "key": "AGENTS_TLS_KEY (--agents-tls-key)", "ca": "AGENTS_TLS_CA (--agents-tls-ca)"}[fe.Which]
		return fmt.Errorf("%s: %w", knob, err)
	}
	if err != nil {
		return err
	}
	o.AgentsTLS = files
	return nil
}
