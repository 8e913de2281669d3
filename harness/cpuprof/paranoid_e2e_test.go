//go:build e2e

package cpuprof

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/testenv"
)

// childEnv makes the test binary TestAsAnotherUser's child.
const childEnv = "CPUPROF_TEST_CHILD"

// TestMain makes the test binary TestAsAnotherUser's child when
// childEnv is set (asAnotherUserChild), the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		if err := asAnotherUserChild(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// asAnotherUserChild is the child: as the user it was started as, it
// checks perf and records a busy process of its own for 300 ms, and
// prints what it found.
func asAnotherUserChild() error {
	plan := Check(Real())
	out := map[string]any{"plan": plan}
	if plan.Reason == "" {
		busy := exec.Command("sh", "-c", "while :; do :; done")
		if err := busy.Start(); err != nil {
			return err
		}
		defer busy.Process.Kill()
		pr := New(Real())
		r := pr.Start(context.Background(), Spec{Dir: os.Getenv(childEnv), Window: 300 * time.Millisecond,
			Pids: func() []int { return []int{busy.Process.Pid} }})
		time.Sleep(200 * time.Millisecond) // perf attaches
		r.Enable()
		time.Sleep(300 * time.Millisecond)
		r.WindowEnded()
		out["profile"] = r.Finish()
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

// TestAsAnotherUser: perf as a user other than root, for real: at
// kernel.perf_event_paranoid 3 Check refuses with the reason; at 2 it
// samples user space only, and a recording of the user's own process
// works. The setting is put back.
func TestAsAnotherUser(t *testing.T) {
	testenv.NeedRoot(t, "runs the test as user nobody and sets kernel.perf_event_paranoid")
	if p := Check(Real()); p.Reason != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true: perf cannot run here: %s (.ci/run installs linux-perf)", p.Reason)
		}
		t.Skipf("perf cannot run here: %s", p.Reason)
	}
	was, err := os.ReadFile(ParanoidPath)
	if err != nil {
		t.Skipf("kernel.perf_event_paranoid: %v", err)
	}
	set := func(level int) bool {
		return os.WriteFile(ParanoidPath, []byte(strconv.Itoa(level)), 0o644) == nil
	}
	defer os.WriteFile(ParanoidPath, was, 0o644)
	// The test binary, where nobody may run it, and a directory nobody
	// may write.
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} { // t.TempDir's are root's own
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	self := filepath.Join(dir, "cpuprof.test")
	copyFile(t, os.Args[0], self)
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(work, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	run := func() map[string]json.RawMessage {
		t.Helper()
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), childEnv+"="+work)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the child as nobody: %v\n%s", err, out)
		}
		line := strings.SplitN(string(out), "\n", 2)[0]
		var got map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Fatalf("the child said %q: %v", out, err)
		}
		return got
	}
	if !set(3) {
		t.Skip("kernel.perf_event_paranoid is not writable here")
	}
	got := run()
	var plan Plan
	_ = json.Unmarshal(got["plan"], &plan)
	if !strings.Contains(plan.Reason, "kernel.perf_event_paranoid is 3") {
		t.Errorf("at 3, as nobody: %+v", plan)
	}
	set(2)
	got = run()
	plan = Plan{}
	_ = json.Unmarshal(got["plan"], &plan)
	if plan.Reason != "" || plan.Event != "cpu-clock:u" || plan.SystemWide {
		t.Errorf("at 2, as nobody: %+v", plan)
	}
	t.Logf("at 2, as nobody: %s", got["profile"])
	var prof struct {
		File       string `json:"file"`
		DurationNs int64  `json:"duration_ns"`
		Reason     string `json:"reason"`
	}
	_ = json.Unmarshal(got["profile"], &prof)
	if prof.File == "" || prof.DurationNs <= 0 {
		t.Errorf("at 2, nobody's own process was not recorded: %+v", prof)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
}
