package script

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/load/payload"
)

// Params are the scenario's own `ceiling load` knobs.
type Params struct {
	File   string `json:"scenario_file"`
	SHA256 string `json:"scenario_file_sha256"` // of the file as read, set by Validate
	// IO is how WebSocket connections are driven: IOLoop (event loops,
	// Linux) or IOGoroutines (a reader and a writer goroutine each).
	IO string `json:"io"`

	spec *Spec
	keys map[string][]byte // signing keys by environment variable; never recorded
}

// ErrBadFile marks an error in the scenario file itself (the CLI exits 2).
var ErrBadFile = errors.New("bad scenario file")

// badFile wraps err (whose text starts with the JSON path) with the flag
// and the file name.
type badFile struct {
	file string
	err  error
}

func (e *badFile) Error() string   { return "--scenario-file " + e.file + ": " + e.err.Error() }
func (e *badFile) Unwrap() []error { return []error{ErrBadFile, e.err} }

// --io values.
const (
	IOLoop       = "loop"
	IOGoroutines = "goroutines"
)

// Flags registers --scenario-file and --io.
func (p *Params) Flags(fs *flag.FlagSet) {
	fs.StringVar(&p.File, "scenario-file", p.File, "JSON scenario file describing the protocol to drive (see docs/scenarios.md)")
	fs.StringVar(&p.IO, "io", p.IO, "`mode` of the WebSocket connections: loop (event loops, one per GOMAXPROCS; Linux) | goroutines (a reader and a writer per connection; anywhere). HTTP senders always use goroutines. Default: loop where available")
}

// Validate parses the file and checks it against the common knobs. Every
// error names the flag, the file and the JSON path of the bad field.
func (p *Params) Validate(c *load.Config, given func(flag string) bool) error {
	if err := p.validateIO(given); err != nil {
		return err
	}
	if p.File == "" {
		return errors.New("--scenario-file: required (a JSON scenario file, see docs/scenarios.md)")
	}
	b, err := ReadFile(p.File)
	if err != nil {
		return fmt.Errorf("--scenario-file: %w", err)
	}
	spec, err := Parse(b)
	if err != nil {
		return &badFile{file: p.File, err: err}
	}
	sum := sha256.Sum256(b)
	p.SHA256 = hex.EncodeToString(sum[:])
	if c.Payload == payload.Random {
		return fmt.Errorf("--payload random: a scenario file sends JSON text; use constant or json")
	}
	if c.Rate > 0 {
		return fmt.Errorf("--rate %g: a scenario file sets its own rates (roles[].sends[].rate, per connection); leave --rate at 0", c.Rate)
	}
	if c.Batch != 1 {
		return fmt.Errorf("--batch %d: a scenario file sends one message per send; leave --batch at 1", c.Batch)
	}
	if _, err := assignRoles(spec, c.Connections); err != nil {
		return fmt.Errorf("--connections %d: %w (--scenario-file %s)", c.Connections, err, p.File)
	}
	p.keys = map[string][]byte{}
	for _, r := range spec.Roles {
		for _, sd := range r.Sends {
			if sd.HTTP == nil || sd.HTTP.Sign == nil {
				continue
			}
			sg := sd.HTTP.Sign
			v, ok := os.LookupEnv(sg.KeyEnv)
			if !ok || v == "" {
				return &badFile{file: p.File, err: &pathError{path: sg.path, msg: fmt.Sprintf("environment variable %s is not set (it holds the signing key, which is never recorded)", sg.KeyEnv)}}
			}
			p.keys[sg.KeyEnv] = []byte(v)
		}
	}
	p.spec = spec
	return nil
}

// validateIO settles --io: loop where the event loops run (Linux), else
// goroutines; loop asked for by name where they do not is an error.
func (p *Params) validateIO(given func(flag string) bool) error {
	switch p.IO {
	case "":
		p.IO = IOLoop
	case IOLoop, IOGoroutines:
	default:
		return fmt.Errorf("--io %q: want loop or goroutines", p.IO)
	}
	if p.IO == IOLoop && !loopSupported {
		if given != nil && given("io") {
			return errors.New("--io loop needs Linux (epoll): use --io goroutines")
		}
		p.IO = IOGoroutines // what actually runs, recorded as such
	}
	return nil
}

// New builds the driver. Validate must have passed.
func (p *Params) New(c *load.Config, pool *payload.Pool) (load.Scenario, error) {
	if p.spec == nil {
		if err := p.Validate(c, nil); err != nil {
			return nil, err
		}
	}
	s, err := newScenario(c, pool, p.spec, p.keys)
	if err != nil {
		return nil, err
	}
	s.io = p.IO
	return s, nil
}

// New builds the driver for the scenario file p.File (the constructor of
// the issue 9 contract, for wiring before the registry lands).
func New(cfg *load.Config, pool *payload.Pool, p *Params) (load.Scenario, error) {
	return p.New(cfg, pool)
}

// assignRoles gives each of n connections a role: count roles their
// counts, share roles their share of what the counts leave (largest
// remainder when the shares sum to 1), and the rest to the role with
// neither. Connections are given out in contiguous blocks in role order,
// and connection i is in room i mod rooms, so every role spreads evenly
// over the rooms.
func assignRoles(s *Spec, n int) ([]int, error) {
	counts := make([]int, len(s.Roles))
	left := n
	rest := -1
	for i, r := range s.Roles {
		switch {
		case r.Count >= 0:
			counts[i] = r.Count
			left -= r.Count
		case r.Share == 0:
			rest = i
		}
	}
	if left < 0 {
		return nil, fmt.Errorf("the roles' counts need %d connections", n-left)
	}
	byShare := left
	type rem struct {
		i    int
		frac float64
	}
	var rems []rem
	for i, r := range s.Roles {
		if r.Count >= 0 || r.Share == 0 {
			continue
		}
		exact := r.Share * float64(byShare)
		if rest >= 0 {
			counts[i] = int(math.Round(exact))
			if counts[i] > left {
				counts[i] = left
			}
		} else {
			counts[i] = int(math.Floor(exact))
			rems = append(rems, rem{i, exact - math.Floor(exact)})
		}
		left -= counts[i]
	}
	if rest >= 0 {
		counts[rest] = left
		left = 0
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].frac > rems[b].frac })
	for k := 0; left > 0 && len(rems) > 0; k++ {
		counts[rems[k%len(rems)].i]++
		left--
	}
	if left != 0 {
		return nil, fmt.Errorf("the roles' counts take %d of the connections and no role takes the rest", n-left)
	}
	roles := make([]int, 0, n)
	for i, c := range counts {
		for j := 0; j < c; j++ {
			roles = append(roles, i)
		}
	}
	return roles, nil
}

// roomCount is the number of rooms for n connections.
func (s *Spec) roomCount(n int) int {
	if s.RoomSize > 0 {
		return max(1, (n+s.RoomSize-1)/s.RoomSize)
	}
	return s.RoomCount
}
