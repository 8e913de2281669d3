package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSweepChecksBeforeBoot: values that used to be caught only after a
// server had booted (failing every point) are exit-2 errors naming the
// knob or the target field, and nothing boots.
func TestSweepChecksBeforeBoot(t *testing.T) {
	dir := t.TempDir()
	// An executable the target may name: the checks under test must fail
	// on their own field, not on a missing command.
	server, err := exec.LookPath("true")
	if err != nil {
		t.Skip(err)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const ok = `"command":["` + "%s" + `","{addr}"],"ready":"tcp:{addr}"`
	target := func(name, extra string) string {
		return write(name, `{"name":"x",`+strings.Replace(ok, "%s", server, 1)+`,`+extra+`}`)
	}
	noDir := target("nodir.json", `"dir":"`+filepath.Join(dir, "no", "such", "dir")+`","echo_url":"ws://{addr}/echo"`)
	fileDir := target("filedir.json", `"dir":"`+noDir+`","echo_url":"ws://{addr}/echo"`)
	trailing := write("trailing.json", `{"name":"x",`+strings.Replace(ok, "%s", server, 1)+`,"echo_url":"ws://{addr}/echo"} {"name":"y"}`)
	trailingText := write("trailingtext.json", `{"name":"x",`+strings.Replace(ok, "%s", server, 1)+`,"echo_url":"ws://{addr}/echo"}`+"\n,\n")
	channels := target("channels.json", `"fanout":{"url":"ws://{addr}","app_id":"a","key":"k","secret":"sweep-test-secret","channels":8}`)
	negChannels := target("negchannels.json", `"fanout":{"url":"ws://{addr}","app_id":"a","key":"k","secret":"sweep-test-secret","channels":-1}`)
	fixedEcho := target("fixedecho.json", `"echo_url":"ws://127.0.0.1:6001/echo"`)
	hostOnly := target("hostonly.json", `"echo_url":"ws://{host}:6001/echo"`)
	fixedFanout := target("fixedfanout.json", `"fanout":{"url":"ws://127.0.0.1:6001","app_id":"a","key":"k","secret":"sweep-test-secret"}`)
	ext := `{"name":"x","external":true,"ready":"tcp:127.0.0.1:6001","echo_url":"ws://127.0.0.1:6001/echo"`
	external := write("external.json", ext+`}`)
	extCommand := write("extcommand.json", ext+`,"command":["`+server+`"]}`)
	extAddr := write("extaddr.json", `{"name":"x","external":true,"echo_url":"ws://{addr}/echo"}`)
	extCPUs := write("extcpus.json", ext+`,"external_cpus":2}`)
	cpusNotExt := target("cpusnotext.json", `"external_cpus":2,"echo_url":"ws://{addr}/echo"`)
	conns := target("conns.json", `"connections":{"url":"ws://{addr}/echo"}`)

	tests := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"record size over the frame limit", []string{"RECORD_SIZE", "16777217"}, nil, "RECORD_SIZE"},
		{"record size flag over the frame limit", nil, []string{"--record-size", "16777217"}, "RECORD_SIZE (--record-size)"},
		// Past fs.nr_open's default: no RLIMIT_NOFILE reaches it, root or not.
		{"ladder over the file-descriptor limit", []string{"CONNS_LADDER_10", "32 1100000"}, nil, "CONNS_LADDER_10 (--conns-ladder): 1100000 connections need about"},
		// The connection-scale sweep's limits (harness/limits): each names
		// the limit and its value.
		{"connections past the agents' port range", []string{"SCENARIO", "connections", "CONNS_LADDER_1", "1000", "AGENTS", "2", "AGENTS_PORT_RANGE", "40000-40099", "SOURCE_ADDRS", "1"},
			nil, "CONNS_LADDER_1 (--conns-ladder): 500 connections from one generator process to one server need as many ephemeral ports, but AGENTS_PORT_RANGE gives 100 ports"},
		{"connections past the memory available", []string{"SCENARIO", "connections", "CONNS_LADDER_1", "1000", "SERVER_CONN_BYTES", "16GiB"},
			[]string{"--target", conns}, "CONNS_LADDER_1 (--conns-ladder): 1000 connections plan about 16000.0 GiB of memory"},
		{"a ramp for another scenario", []string{"CONN_RAMP", "100"}, nil, "CONN_RAMP (--conn-ramp): the ramp is SCENARIO=connections's (its --ramp), not echo's"},
		{"source addrs", []string{"SOURCE_ADDRS", "127.0.0.x"}, nil, "SOURCE_ADDRS"},
		{"batch x record size over the write limit", []string{"RECORD_SIZE", "1048576", "BATCH_LADDER", "10 100"}, nil, "batch 100 x 1048576 B"},
		{"target dir missing", nil, []string{"--target", noDir}, "dir: " + filepath.Join(dir, "no", "such", "dir")},
		{"target dir is a file", nil, []string{"--target", fileDir}, "dir: "},
		{"trailing object after the target", nil, []string{"--target", trailing}, "trailing data"},
		{"trailing text after the target", nil, []string{"--target", trailingText}, "trailing data"},
		{"channels over the smallest rung", []string{"SCENARIO", "fanout", "CONNS_LADDER_1", "4 16"}, []string{"--target", channels}, "fanout.channels: 8"},
		{"negative channels", []string{"SCENARIO", "fanout"}, []string{"--target", negChannels}, "fanout.channels: -1"},
		{"echo_url without the point's address", nil, []string{"--target", fixedEcho}, "echo_url"},
		{"echo_url with {host} only", nil, []string{"--target", hostOnly}, "echo_url"},
		{"fanout.url without the point's address", []string{"SCENARIO", "fanout"}, []string{"--target", fixedFanout}, "fanout.url"},
		{"--url override without the point's address", nil, []string{"--target", hostOnly, "--url", "ws://127.0.0.1:9/echo"}, "echo_url"},
		{"duration NaN", []string{"DURATION", "NaN"}, nil, "DURATION"},
		{"fault malformed", []string{"FAULT", "kill:node2"}, nil, "FAULT: \"kill:node2\": want KIND:SERVER@FRACTION"},
		{"fault flag fraction", nil, []string{"--fault", "kill:node2@1.5"}, "flag --fault: \"kill:node2@1.5\": fraction \"1.5\" of the window: want 0 < f < 1"},
		{"fault on a one-server target", []string{"SCENARIO", "fanout", "FAULT", "kill:server@0.5"}, []string{"--target", channels, "--conns-ladder", "10=16"}, "needs a target that boots several servers"},
		{"SRV_CPUSET with an external target", []string{"SRV_CPUSET", "1"}, []string{"--target", external}, "SRV_CPUSET: does not apply to an external target"},
		{"external target with a command", nil, []string{"--target", extCommand}, "command: an external target boots nothing"},
		{"external target's URL takes the point's port", nil, []string{"--target", extAddr}, "echo_url: the URL #1"},
		{"external_cpus without metrics", nil, []string{"--target", extCPUs}, "external_cpus: needs metrics"},
		{"external_cpus without external", nil, []string{"--target", cpusNotExt}, "external_cpus: only for an external target"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sweepEnv(t, tt.env...)
			work := filepath.Join(dir, "never")
			var stdout, stderr bytes.Buffer
			args := append([]string{"sweep", "--out", filepath.Join(t.TempDir(), "out.json"), "--work-dir", work}, tt.args...)
			err := run(args, &stdout, &stderr)
			if code := exitCode(err); code != 2 {
				t.Fatalf("exit %d (%v), want 2", code, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("message %q does not name %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "/proc/self/exe") {
				t.Errorf("message %q names the trampoline, not the field", err)
			}
			if _, err := os.Stat(work); err == nil {
				t.Errorf("the work dir was created: something ran")
			}
		})
	}

	// Allowed explicitly, by the flag or the target field: it passes the
	// checks and the target says what the result must warn about.
	allowed := target("allowed.json", `"echo_url":"ws://127.0.0.1:6001/echo","allow_unpinned_url":true`)
	for _, args := range [][]string{{"--target", fixedEcho, "--allow-unpinned-url"}, {"--target", allowed}} {
		sweepEnv(t)
		p, err := sweepOptions(append([]string{"--out", filepath.Join(t.TempDir(), "o.json")}, args...), new(bytes.Buffer))
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		w := p.Target.Warnings(p.Point.Scenario)
		if len(w) != 1 || !strings.Contains(w[0], "ws://127.0.0.1:6001/echo") {
			t.Errorf("%v: warnings %q, want one naming the URL", args, w)
		}
	}
	var u usageError
	sweepEnv(t)
	_, err = sweepOptions([]string{"--target", fixedEcho}, new(bytes.Buffer))
	if !errors.As(err, &u) {
		t.Errorf("unpinned URL: %v, want a usage error", err)
	}
}
