package harness

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/limits"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
)

// A ladder whose top rung the generator's file-descriptor limit cannot
// hold is refused before anything boots, naming the ladder's knob and the
// limit; one that fits passes.
func TestResolveRefusesLadderOverNoFile(t *testing.T) {
	held := func(limits.Ask, int) limits.Machine {
		return limits.Machine{NoFile: 20000, NoFileWhy: "the hard limit is 20000 and raising it needs CAP_SYS_RESOURCE"}
	}
	o := knob.DefaultOptions(false)
	o.BatchLadder = knob.Ladder{10, 100}
	o.HeadlineBatch = 10
	o.ConnsLadders = knob.ConnsLadders{10: {1000, 19936}, 100: {1000, 30000}}
	d := &draft{Options: o}
	err := d.checkLimits(nil, nil, held)
	if err == nil {
		t.Fatal("a 30000-connection rung passed a limit of 20000")
	}
	for _, want := range []string{"CONNS_LADDER_100 (--conns-ladder): 30000 connections need about 30064 file descriptors in the generator", "at most 20000", "CAP_SYS_RESOURCE", "19936 connections or fewer"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "CONNS_LADDER_10 ") {
		t.Errorf("error %q names the ladder that fits", err)
	}
	// The children ask for what the largest rung needs, NoFileLimit at
	// least.
	if d.NoFile != NoFileLimit {
		t.Errorf("the children would ask for RLIMIT_NOFILE %d, want %d", d.NoFile, NoFileLimit)
	}
	d.ConnsLadders[100] = knob.Ladder{1000, 80000}
	_ = d.checkLimits(nil, nil, held)
	if d.NoFile != 80064 {
		t.Errorf("at 80000 connections the children would ask for RLIMIT_NOFILE %d, want 80064", d.NoFile)
	}
	d.ConnsLadders[100] = knob.Ladder{1000, 30000}
	// Split over 3 agents, the generator's side fits.
	d.Agents = 3
	if err := d.checkLimits(nil, nil, held); err != nil {
		t.Errorf("30000 over 3 agents: %v", err)
	}

	// Through Resolve, with this machine's real limit: a rung no limit
	// holds (past fs.nr_open, the most any process may have).
	o = knob.DefaultOptions(false)
	o.ConnsLadders = knob.ConnsLadders{10: {32, 1<<20 + 1}}
	if _, err := resolveInto(&o, pinning.CPUSet{0, 1}); err == nil || !strings.Contains(err.Error(), "CONNS_LADDER_10 (--conns-ladder)") {
		t.Errorf("Resolve with a %d-connection rung: %v, want CONNS_LADDER_10 refused", 1<<20+1, err)
	}
	o = knob.DefaultOptions(false)
	if _, err := resolveInto(&o, pinning.CPUSet{0, 1}); err != nil {
		t.Errorf("default ladders: %v", err)
	}
}

// SOURCE_ADDRS reaches the generator as --source-addrs when given, and
// not at all when auto (the generator's own default; a GENERATOR that
// does not know the flag keeps working).
func TestLoadArgsSourceAddrs(t *testing.T) {
	for _, tt := range []struct{ knob, want string }{{"", ""}, {"auto", ""}, {"4", "4"}, {"127.0.0.1-127.0.0.8", "127.0.0.1-127.0.0.8"}} {
		o := knob.DefaultOptions(false)
		o.SourceAddrs = tt.knob
		args := loadArgs(planOf(o), target.Spec{}, result.PointKey{Batch: 10, Connections: 32}, target.Addr{}, "ws://127.0.0.1:1/echo", time.Second, time.Second, pointFiles{})
		got := ""
		for i, a := range args {
			if a == "--source-addrs" && i+1 < len(args) {
				got = args[i+1]
			}
		}
		if got != tt.want {
			t.Errorf("SOURCE_ADDRS=%q: --source-addrs %q in %v, want %q", tt.knob, got, args, tt.want)
		}
	}
}

// IO_PATTERN=eager reaches ceiling load as --eager-reads; the default
// passes nothing (the generator's own default is batch-wake).
func TestLoadArgsIOPattern(t *testing.T) {
	for _, tt := range []struct {
		knob string
		want bool
	}{{"batch-wake", false}, {"eager", true}} {
		o := knob.DefaultOptions(false)
		o.IOPattern = tt.knob
		args := loadArgs(planOf(o), target.Spec{}, result.PointKey{Batch: 10, Connections: 32}, target.Addr{}, "ws://127.0.0.1:1/echo", time.Second, time.Second, pointFiles{})
		if got := slices.Contains(args, "--eager-reads"); got != tt.want {
			t.Errorf("IO_PATTERN=%s: --eager-reads in %v is %v, want %v", tt.knob, args, got, tt.want)
		}
	}
}
