package harness

import (
	"os"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/pinning"
)

// TestResolveRefusesBeforeBoot: a FAULT the target cannot take and an
// SRV_USER that cannot hold are refused by Resolve, naming the knob,
// before anything boots (each knob's rules are harness/fault's TestCheck
// and harness/runas's; this is their wiring, which the end-to-end lane
// checked with the binaries until issue 48). That a harness that is not
// root is refused SRV_USER, by the binary run as nobody, stays in the
// end-to-end lane (TestServerRunsAsSrvUser).
func TestResolveRefusesBeforeBoot(t *testing.T) {
	load := func(tg target.Spec) func(string) (target.Spec, error) {
		return func(string) (target.Spec, error) { return tg, nil }
	}
	single := target.Spec{Name: "single", Command: []string{"/bin/true", "{addr}"}, Ready: "tcp:{addr}"}
	single.SetBlock("echo_url", []byte(`"ws://{addr}/echo"`))
	single.SetBlock("fanout", []byte(`{"url": "ws://{addr}", "app_id": "app-id", "key": "app-key", "secret": "app-secret"}`))
	external := target.Spec{Name: "elsewhere", External: true, Ready: "tcp:127.0.0.1:1"}
	external.SetBlock("echo_url", []byte(`"ws://127.0.0.1:1/echo"`))
	for _, tc := range []struct {
		name string
		edit func(*knob.Options)
		tg   target.Spec
		want []string
	}{
		{"fault on one server", func(o *knob.Options) {
			o.Scenario, o.Fault = "fanout", knob.Fault{Kind: knob.FaultKill, Server: "server", Fraction: 0.5}
		}, single, []string{"FAULT (--fault) kill:server@0.5", "needs a target that boots several servers"}},
		{"srv-user root", func(o *knob.Options) { o.ServerUser = "root" }, single, []string{"SRV_USER (--srv-user)", "is root (uid 0)"}},
		{"srv-user uid 0", func(o *knob.Options) { o.ServerUser = "0" }, single, []string{"SRV_USER (--srv-user)", "is root (uid 0)"}},
		{"srv-user unknown", func(o *knob.Options) { o.ServerUser = "no-such-user-ceiling" }, single, []string{"SRV_USER (--srv-user)", "no such user"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := knob.DefaultOptions(false)
			tc.edit(&o)
			_, err := Resolve(o, Env{Available: pinning.CPUSet{0, 1}, LoadTarget: load(tc.tg)})
			for _, w := range tc.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err %v, want it to say %q", err, w)
				}
			}
		})
	}
	if os.Geteuid() == 0 { // else SRV_USER is refused for not being root first
		o := knob.DefaultOptions(false)
		o.ServerUser = "nobody"
		_, err := Resolve(o, Env{Available: pinning.CPUSet{0, 1}, LoadTarget: load(external)})
		if err == nil || !strings.Contains(err.Error(), "SRV_USER (--srv-user): does not apply to an external target") {
			t.Errorf("SRV_USER with an external target: %v", err)
		}
	}
}
