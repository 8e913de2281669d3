package harness

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/bounds"
	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/pinning"
)

// TestBoundsOfEverySource is issue 52's second failure: a bound checked
// where one source parses its value let another source through (a
// scenario file's own "sweep" ladder of 10,000 rungs booted; a target
// file's ready_timeout and stop_grace took 1000h; DURATION=1e-9 was
// taken). Each bounded field of harness/bounds.Fields is set out of
// bounds through each layer that can set it, and Resolve refuses it,
// naming the field, before anything boots. It fails on ba59874 for the
// scenario file, the two target fields and DURATION=1e-9.
func TestBoundsOfEverySource(t *testing.T) {
	dir := t.TempDir()
	rungs := make([]string, knob.MaxRungs+1)
	for i := range rungs {
		rungs[i] = strconv.Itoa(i + 1)
	}
	scenario := filepath.Join(dir, "rooms.json")
	chat, err := os.ReadFile("../load/scenario/script/testdata/chat.json")
	if err != nil {
		t.Fatal(err)
	}
	withSweep := strings.Replace(string(chat), `"client_id"`, `"sweep": {"connections": [`+strings.Join(rungs, ", ")+`]}, "client_id"`, 1)
	if err := os.WriteFile(scenario, []byte(withSweep), 0o644); err != nil {
		t.Fatal(err)
	}
	base := func() target.Spec {
		s := target.Spec{Name: "srv", Command: []string{"/bin/true", "{addr}"}, Ready: "tcp:{addr}"}
		s.SetBlock("echo_url", []byte(`"ws://{addr}/echo"`))
		s.SetBlock("script", []byte(`{"url": "ws://{addr}"}`))
		return s
	}
	env := func(key, value string) func(*knob.Options) error {
		return func(o *knob.Options) error {
			return o.ApplyEnv(func(k string) (string, bool) {
				if k == key {
					return value, true
				}
				return "", false
			}, []string{key + "=" + value})
		}
	}
	for _, tc := range []struct {
		field, source string
		edit          func(*knob.Options) error
		tg            func(*target.Spec)
		want          string
	}{
		{"BATCH_LADDER", "BATCH_LADDER", env("BATCH_LADDER", strings.Join(rungs, " ")), nil, "65 rungs"},
		{"CONNS_LADDER_<batch>", "CONNS_LADDER_<batch>", env("CONNS_LADDER_10", strings.Join(rungs, " ")), nil, "65 rungs"},
		{"CONNS_LADDER_<batch>", "the scenario file's \"sweep\"", func(o *knob.Options) error {
			o.Scenario, o.ScenarioFile = "script", scenario
			return nil
		}, nil, "65 rungs, at most 64"},
		{"DURATION", "DURATION=1e-9", env("DURATION", "1e-9"), nil, "DURATION: 1ns is shorter than the shortest window"},
		{"DURATION", "DURATION=2h", env("DURATION", "2h"), nil, "above the limit"},
		{"WARMUP", "WARMUP=2h", env("WARMUP", "2h"), nil, "above the limit"},
		{"COMPARE_DURATION", "COMPARE_DURATION=2h", env("COMPARE_DURATION", "2h"), nil, "above the limit"},
		{"READY_TIMEOUT", "--ready-timeout 2h", func(o *knob.Options) error { o.ReadyTimeout = 2 * time.Hour; return nil }, nil, "above the limit"},
		{"AGENTS_JOIN_TIMEOUT", "AGENTS_JOIN_TIMEOUT=2h", env("AGENTS_JOIN_TIMEOUT", "2h"), nil, "above the limit"},
		{"ready_timeout", "TARGET's ready_timeout", nil, func(s *target.Spec) { s.ReadyTimeout = "1000h" }, "ready_timeout: 1000h0m0s is not within"},
		{"stop_grace", "TARGET's stop_grace", nil, func(s *target.Spec) { s.StopGrace = "1000h" }, "stop_grace: 1000h0m0s is not within"},
	} {
		t.Run(tc.source, func(t *testing.T) {
			o := knob.DefaultOptions(false)
			o.TargetFile = "target.json"
			if tc.edit != nil {
				if err := tc.edit(&o); err != nil {
					if !strings.Contains(err.Error(), tc.want) && !strings.Contains(err.Error(), "above the limit") {
						t.Errorf("%s refused when parsed, without saying %q: %v", tc.source, tc.want, err)
					}
					return // refused where it is parsed: a bound too
				}
			}
			tg := base()
			if tc.tg != nil {
				tc.tg(&tg)
			}
			_, err := Resolve(o, Env{Available: pinning.CPUSet{0, 1}, LoadTarget: func(string) (target.Spec, error) { return tg, nil }})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s out of bounds: %v, want it refused saying %q", tc.source, err, tc.want)
			}
		})
	}
	// Every field of the table was driven above.
	driven := map[string]bool{}
	for _, s := range []string{"BATCH_LADDER", "CONNS_LADDER_<batch>", "DURATION", "WARMUP", "COMPARE_DURATION", "READY_TIMEOUT", "AGENTS_JOIN_TIMEOUT", "ready_timeout", "stop_grace"} {
		driven[s] = true
	}
	for _, f := range bounds.Fields {
		if !driven[f.Name] && f.Name != "COMPARE_WARMUP" && f.Name != "CONN_INTERVAL" {
			t.Errorf("bounds.Fields has %s, which this test does not drive", f.Name)
		}
	}
}
