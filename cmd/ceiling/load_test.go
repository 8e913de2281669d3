package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/load"
)

// Every bad input exits 2 with a message naming the flag, before anything
// connects: the URL points at a port nothing listens on, so a run that got
// past validation would fail with exit 1 instead.
func TestLoadFlagValidation(t *testing.T) {
	const dead = "--url=ws://127.0.0.1:1/echo"
	tests := []struct {
		name string
		args []string
		want string // in the error
	}{
		{"unknown flag", []string{"--bogus"}, "bogus"},
		{"positional", []string{dead, "extra"}, "extra"},
		{"scenario", []string{"--scenario", "chat"}, "-scenario"},
		{"payload", []string{"--payload", "xml"}, "-payload"},
		{"duration", []string{"--duration", "ten"}, "-duration"},
		{"zero duration", []string{dead, "--duration", "0s"}, "--duration"},
		{"negative warmup", []string{dead, "--warmup", "-1s"}, "--warmup"},
		{"connections", []string{dead, "--connections", "0"}, "--connections"},
		{"batch", []string{dead, "--batch", "0"}, "--batch"},
		{"record size", []string{dead, "--record-size", "0"}, "--record-size"},
		{"json too small", []string{dead, "--payload", "json", "--record-size", "100"}, "--record-size 100 is too small for --payload json"},
		{"seed with constant", []string{dead, "--payload-seed", "3"}, "--payload-seed"},
		{"seed range", []string{dead, "--payload", "random", "--payload-seed", "4294967296"}, "-payload-seed"},
		{"rate", []string{dead, "--rate", "-1"}, "--rate"},
		{"max-inflight without rate", []string{dead, "--max-inflight", "5"}, "--max-inflight"},
		{"max-inflight zero", []string{dead, "--rate", "10", "--max-inflight", "0"}, "--max-inflight"},
		{"url scheme", []string{"--url", "http://127.0.0.1:1/echo"}, "--url"},
		{"wss", []string{"--url", "wss://127.0.0.1:1/echo"}, "--url"},
		{"strategy", []string{dead, "--connect-strategy", "slow"}, "-connect-strategy"},
		{"busy-poll without the loops", []string{dead, "--io", "goroutines", "--busy-poll"}, "--busy-poll needs --io loop"},
		{"concurrency without bounded", []string{dead, "--connect-strategy", "stagger", "--connect-concurrency", "8"}, "--connect-concurrency"},
		{"stagger without stagger", []string{dead, "--connect-stagger-ms", "5"}, "--connect-stagger-ms"},
		{"stagger with all-at-once", []string{dead, "--connect-strategy", "all-at-once", "--connect-stagger-ms", "5"}, "--connect-stagger-ms"},
		{"concurrency zero", []string{dead, "--connect-concurrency", "0"}, "--connect-concurrency"},
		{"channels with echo", []string{dead, "--channels", "2"}, "--channels"},
		{"secret with echo", []string{dead, "--secret", "s"}, "--secret"},
		{"channels over connections", []string{"--scenario", "fanout", "--url", "ws://127.0.0.1:1", "--connections", "2", "--channels", "3"}, "--channels"},
		{"publishers", []string{"--scenario", "fanout", "--url", "ws://127.0.0.1:1", "--publishers", "0"}, "--publishers"},
		{"empty key", []string{"--scenario", "fanout", "--url", "ws://127.0.0.1:1", "--key", ""}, "--key"},
		{"json dir", []string{dead, "--json", "/nonexistent/dir/r.json"}, "--json"},
		{"marker dir", []string{dead, "--measure-marker", "/nonexistent/dir/m"}, "--measure-marker"},
		{"source-addrs", []string{dead, "--source-addrs", "127.0.0.1-localhost"}, "--source-addrs"},
		{"source-addrs count", []string{dead, "--source-addrs", "300"}, "--source-addrs 300"},
		{"source-addrs range", []string{dead, "--source-addrs", "127.0.0.9-127.0.0.2"}, "--source-addrs"},
		{"connections over fs.nr_open", []string{dead, "--connections", "2000000000"}, "--connections 2000000000: needs about"},
		{"random fanout", []string{"--scenario", "fanout", "--url", "ws://127.0.0.1:1", "--payload", "random"}, "--payload random"},
		{"io name", []string{dead, "--io", "threads"}, "-io"},
		{"io with drop", []string{dead, "--drop", "--io", "loop"}, "--io"},
		{"io with fanout", []string{"--scenario", "fanout", "--url", "ws://127.0.0.1:1", "--io", "goroutines"}, "--io"},
		{"script without file", []string{"--scenario", "script", "--url", "ws://127.0.0.1:1"}, "--scenario-file: required"},
		{"script bad file", []string{"--scenario", "script", "--url", "ws://127.0.0.1:1", "--scenario-file", "../../load/scenario/script/testdata/bad-share.json"}, "--scenario-file ../../load/scenario/script/testdata/bad-share.json: roles[0].share: 1.5: "},
		{"script with rate", []string{"--scenario", "script", "--url", "ws://127.0.0.1:1", "--scenario-file", "../../benchmark/scenarios/rooms.json", "--rate", "10"}, "--rate 10"},
		{"scenario-file with echo", []string{dead, "--scenario-file", "x.json"}, "--scenario-file"},
		{"nats keys", []string{"--scenario", "produce", "--url", "ws://127.0.0.1:1", "--keys", "0"}, "--keys 0"},
		{"nats fetch without backlog", []string{"--scenario", "fetch", "--url", "ws://127.0.0.1:1", "--prepopulate", "0"}, "--prepopulate 0"},
		{"nats max", []string{"--scenario", "mixed", "--url", "ws://127.0.0.1:1", "--max", "-1"}, "--max -1"},
		{"nats window", []string{"--scenario", "stream", "--url", "ws://127.0.0.1:1", "--window", "0"}, "--window 0"},
		{"nats window outside stream", []string{"--scenario", "fetch", "--url", "ws://127.0.0.1:1", "--window", "5"}, "--window"},
		{"nats max with produce", []string{"--scenario", "produce", "--url", "ws://127.0.0.1:1", "--max", "5"}, "--max"},
		{"nats stream name", []string{"--scenario", "produce", "--url", "ws://127.0.0.1:1", "--stream", "a.b"}, "--stream"},
		{"nats storage", []string{"--scenario", "produce", "--url", "ws://127.0.0.1:1", "--storage", "disk"}, "--storage"},
		{"nats rate", []string{"--scenario", "produce", "--url", "ws://127.0.0.1:1", "--rate", "100"}, "--rate"},
		{"keys with echo", []string{dead, "--keys", "2"}, "--keys"},
		{"nats ca-file without wss", []string{"--scenario", "produce", "--url", "ws://127.0.0.1:1", "--ca-file", "load_test.go"}, "--ca-file and --insecure are only read with a wss://"},
		{"nats ca-file missing", []string{"--scenario", "produce", "--url", "wss://127.0.0.1:1", "--ca-file", "/nonexistent/ca.pem"}, "--ca-file /nonexistent/ca.pem"},
		{"nats ca-file with insecure", []string{"--scenario", "produce", "--url", "wss://127.0.0.1:1", "--ca-file", "load_test.go", "--insecure"}, "--ca-file with --insecure"},
		{"repeated url with echo", []string{dead, "--url", "ws://127.0.0.1:2/echo"}, "--url given 2 times"},
		{"nats url scheme", []string{"--scenario", "produce", "--url", "ws://127.0.0.1:1", "--url", "http://127.0.0.1:2"}, "--url \"http://127.0.0.1:2\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(append([]string{"load"}, tt.args...), &stdout, &stderr)
			if err == nil {
				t.Fatalf("accepted %v", tt.args)
			}
			if got := exitCode(err); got != 2 {
				t.Fatalf("exit %d (%v), want 2", got, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not name %q", err, tt.want)
			}
			if stdout.Len() != 0 {
				t.Fatalf("wrote a report for bad input:\n%s", stdout.String())
			}
		})
	}
}

func TestLoadGoodCombinationsPassValidation(t *testing.T) {
	// Valid flags against a dead port: validation passes, the run fails to
	// connect, which is exit 1, not 2.
	for _, args := range [][]string{
		{"--connect-strategy", "bounded", "--connect-concurrency", "32"},
		{"--connect-strategy", "stagger", "--connect-stagger-ms", "1"},
		{"--payload", "json", "--record-size", "256", "--payload-seed", "7"},
		{"--rate", "100", "--max-inflight", "4"},
		{"--io", "goroutines"},
		{"--io", "reactor", "--eager-reads"},
		{"--busy-poll"},
		{"--io", "loop", "--rate", "100"},
	} {
		var stdout, stderr bytes.Buffer
		args = append([]string{"load", "--url", "ws://127.0.0.1:1/echo", "--connections", "2", "--duration", "100ms", "--warmup", "0s", "--quiet"}, args...)
		err := run(args, &stdout, &stderr)
		if err == nil || exitCode(err) != 1 {
			t.Fatalf("%v: err %v (exit %d), want a connect failure with exit 1", args, err, exitCode(err))
		}
		if !strings.HasPrefix(stdout.String(), "FAILED: no connection opened") || !strings.Contains(stdout.String(), "ERRORS: 2") || !strings.Contains(stdout.String(), "connect_ECONNREFUSED") {
			t.Fatalf("%v: report does not lead with the connect errors:\n%s", args, stdout.String())
		}
	}
}

func TestLoadSelfTest(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run([]string{"load", "--self-test"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "self-test passed") {
		t.Fatalf("stdout:\n%s", stdout.String())
	}
}

// TestLoadHelpOnce: `ceiling load -h` lists every registered scenario and
// prints each flag once, a flag several scenarios share under them all.
func TestLoadHelpOnce(t *testing.T) {
	for _, args := range [][]string{{"load", "-h"}, {"load", "--scenario", "echo", "--help"}} {
		var stdout, stderr bytes.Buffer
		if err := run(args, &stdout, &stderr); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		help := stderr.String() + stdout.String()
		for _, name := range load.ScenarioNames() {
			if !strings.Contains(help, "--scenario "+name+": ") {
				t.Errorf("%q: no section for --scenario %s", args, name)
			}
		}
		seen := map[string]int{}
		for _, line := range strings.Split(help, "\n") {
			if f, ok := strings.CutPrefix(line, "  --"); ok {
				seen[strings.Fields(f)[0]]++
			}
		}
		for f, n := range seen {
			if n > 1 {
				t.Errorf("%q: -%s printed %d times", args, f, n)
			}
		}
		if seen["ca-file"] != 1 || seen["insecure"] != 1 {
			t.Errorf("%q: -ca-file %d and -insecure %d times, want once each", args, seen["ca-file"], seen["insecure"])
		}
	}
}
