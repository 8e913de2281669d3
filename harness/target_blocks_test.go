package harness_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// A target file's scenario blocks are passed through raw: a TargetSpec
// written (as each point's target.json is) reads back the same, blocks
// and all. The harness once lost echo_url here (issue 9's first attempt).
func TestTargetRoundTripKeepsScenarioBlocks(t *testing.T) {
	for _, file := range []string{"../benchmark/targets/refserver.json", "../benchmark/targets/websocketd-echo.json"} {
		tg, err := harness.LoadTarget(file)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(tg)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "target.json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		back, err := harness.LoadTarget(path)
		if err != nil {
			t.Fatalf("%s written and read back: %v\n%s", file, err, b)
		}
		back.File, tg.File = "", ""
		if diff := cmp.Diff(tg, back, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s round trip (-want +got):\n%s", file, diff)
		}
		for _, sc := range []string{"echo", "fanout"} {
			want, errWant := tg.URLFor(sc)
			got, errGot := back.URLFor(sc)
			if want != got || (errWant == nil) != (errGot == nil) {
				t.Errorf("%s: URLFor(%s) = %q, %v after the round trip; want %q, %v", file, sc, got, errGot, want, errWant)
			}
		}
	}
}

// A key that is neither the harness's nor a scenario's block is refused by
// name, and a block's own errors name its field.
func TestTargetBlockErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{`"echo_urll": "ws://{addr}/echo"`, `"echo_urll"`},
		{`"echo_url": 5`, "echo_url: want a string URL"},
		{`"fanout": {"url": "ws://{addr}", "app_id": "a", "key": "k", "secret": "long-enough-secret", "channels": -1}`, "fanout.channels: -1 is negative"},
		{`"fanout": {"url": "ws://{addr}", "app": "a"}`, `fanout: json: unknown field "app"`},
	} {
		path := filepath.Join(t.TempDir(), "t.json")
		body := `{"name": "x", "command": ["x", "{addr}"], "ready": "tcp:{addr}", ` + tc.body + `}`
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := harness.LoadTarget(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: LoadTarget = %v, want an error containing %q", tc.body, err, tc.want)
		}
	}
}
