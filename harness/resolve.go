package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/fault"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/runas"
	"github.com/ceiling-bench/ceiling/harness/secrets"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/pinning"
)

// Env is what Resolve reads besides the knobs.
type Env struct {
	// Available are the CPUs this process may run on (its affinity);
	// the default sets are carved from it.
	Available pinning.CPUSet
	// Environ is the environment whose secret-looking variables are
	// redacted (os.Environ()).
	Environ []string
	// LoadTarget reads a target file; nil: LoadTarget. Each file is read
	// once.
	LoadTarget func(path string) (target.Spec, error)
}

// ResolveKnobs fills what the knobs left open and validates every knob
// together, before anything boots, without reading a target file: a plan
// for a Sweep whose PointRunner boots nothing, and the first half of
// Resolve. Each error names the knob as both its variable and its flag.
func ResolveKnobs(o knob.Options, available pinning.CPUSet) (*Plan, error) {
	d := &draft{Options: o}
	if err := d.resolveKnobs(available); err != nil {
		return nil, err
	}
	plan := d.plan(redact.New())
	if err := settleBudget(plan); err != nil {
		return nil, err
	}
	if err := plan.checkBounds(o.AllowLong); err != nil {
		return nil, err
	}
	return plan, nil
}

// Resolve is ResolveKnobs, then the target files: TARGET (and BASE_TARGET
// in a two-arm sweep) read once each, the flag overrides and the
// scenario's defaults applied (its connection ladders and objective), the
// knobs checked against the target, and the secrets gathered. Every error
// is the user's to fix (exit 2): nothing has booted.
func Resolve(o knob.Options, env Env) (*Plan, error) {
	srvGiven := len(o.ServerCPUs) > 0 // before the knobs pick one
	p := &draft{Options: o}
	if err := p.resolveKnobs(env.Available); err != nil {
		return nil, err
	}
	read := env.LoadTarget
	if read == nil {
		read = target.Load
	}
	if err := p.resolveTarget(read); err != nil {
		return nil, err
	}
	if p.RunAs != nil && p.Target.External {
		return nil, fmt.Errorf("SRV_USER (--srv-user): does not apply to an external target (TARGET %s has \"external\": true: the harness boots no server); unset it", p.TargetFile)
	}
	if p.Target.External && srvGiven {
		// Refused, not ignored: whoever set it expects the server pinned.
		return nil, fmt.Errorf("SRV_CPUSET: does not apply to an external target (TARGET %s has \"external\": true: the harness boots and pins no server); unset it", p.TargetFile)
	}
	if p.TwoArm() {
		if err := p.resolveBaseTarget(read); err != nil {
			return nil, err
		}
	}
	set, notes, err := secrets.Gather(p.Generator, p.Target, env.Environ)
	if err != nil {
		return nil, err
	}
	if p.BaseTarget != nil {
		// Checked with its file (target.Spec.Check refuses short ones).
		set.Add(p.BaseTarget.Secrets()...)
	}
	if p.AgentsToken != "" {
		set.Add(p.AgentsToken.Text())
	}
	p.Notes = append(p.Notes, notes...)
	if err := p.checkLimits(&p.Target, p.BaseTarget, machineLimits); err != nil {
		return nil, err
	}
	p.resolveObjective()
	if err := fault.Check(&p.Options, p.Target); err != nil {
		return nil, err
	}
	if p.CompareMode == knob.ModeDuet && (p.Target.External || p.BaseTarget != nil && p.BaseTarget.External) {
		p.CompareMode, p.DuetServerCPUs, p.DuetGeneratorCPUs = knob.ModeInterleaved, nil, nil
		p.Notes = append(p.Notes, "COMPARE_MODE: interleaved, since an external server is not booted on a half of this machine")
	}
	plan := p.plan(set)
	plan.targeted = true
	// Last: the target's scenario may have set the connection ladders.
	if err := settleBudget(plan); err != nil {
		return nil, err
	}
	if err := plan.checkBounds(o.AllowLong); err != nil {
		return nil, err
	}
	return plan, nil
}

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
