//go:build e2e

package harness_test

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/testenv"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/supervise"
)

// openDir is a new directory any user may search and read (t.TempDir's
// are root's, mode 0700), removed at the end.
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ceiling-runas-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyExec(t *testing.T, from, dir string) string {
	t.Helper()
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	to := filepath.Join(dir, filepath.Base(from))
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return to
}

// TestServerRunsAsSrvUser: with SRV_USER the server under test runs as
// that user, with its HOME, and cannot write the harness's evidence (the
// point's load.json, marker, OUT's directory), while its own {workdir}
// is writable. It carries the containment marker as every child does.
// The harness still samples its CPU and stops its whole
// tree, and the result says who it ran as.
func TestServerRunsAsSrvUser(t *testing.T) {
	needProcs(t)
	testenv.NeedRoot(t, "SRV_USER's supervisor must be allowed to setuid")
	nobody, err := user.Lookup("nobody")
	if err != nil {
		t.Fatalf("no user nobody here: %v", err)
	}
	dir := openDir(t)
	refserver := copyExec(t, filepath.Join(bin, "refserver"), dir)
	tg := refTarget(t)
	tg.Command[0] = refserver
	tg.Dir = dir
	// A background child of its own, to be stopped with it; then an
	// attempt at each file it must not write.
	script := `echo "uid=$(id -u) home=$HOME user=$USER marker=$CEILING_SUPERVISED."; sleep 300 &
touch "$0/server/state" && echo STATE_WRITTEN
for f in "$0/load.json" "$0/measure.marker" "$0/forged" "$1/forged"; do
  if (: > "$f") 2>/dev/null; then echo "FORGED $f"; fi
done
shift; exec "$@"`
	o := miniOptions(t, knob.Ladder{10}, knob.ConnsLadders{10: {2}})
	o.WorkDir = openDir(t)
	outDir := openDir(t)
	o.Out = filepath.Join(outDir, "ceiling.json")
	o.ServerUser = "nobody"
	tg.Command = append([]string{"/bin/sh", "-c", script, "{workdir}/..", outDir}, tg.Command...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, _, err := runSweepOnce(t, ctx, o, tg)
	if _, err := contentionIsNotTheSubject(t, r, err); err != nil {
		t.Fatalf("sweep: %v", err)
	}
	logs, _ := filepath.Glob(filepath.Join(o.WorkDir, "point-*", "server.log"))
	if len(logs) == 0 {
		t.Fatal("no server.log")
	}
	for _, l := range logs {
		b, _ := os.ReadFile(l)
		log := string(b)
		if want := "uid=" + nobody.Uid + " home=" + nobody.HomeDir + " user=nobody"; !strings.Contains(log, want) {
			t.Errorf("%s: %q lacks %q", l, log, want)
		}
		// The containment marker (supervise.MarkerEnv) reaches it as it
		// reaches every child: found by it, an escaped process is killed.
		if !regexp.MustCompile(`marker=[0-9]+(\.[0-9]+)?/[0-9]+\.`).MatchString(log) {
			t.Errorf("%s: the server under SRV_USER lacks %s: %q", l, supervise.MarkerEnv, log)
		}
		if !strings.Contains(log, "STATE_WRITTEN") {
			t.Errorf("%s: the server could not write its {workdir}: %q", l, log)
		}
		if strings.Contains(log, "FORGED") {
			t.Errorf("%s: the server wrote the harness's files: %q", l, log)
		}
	}
	if r.Meta.Target.User != "nobody" {
		t.Errorf("meta.target.user = %q, want nobody", r.Meta.Target.User)
	}
	for _, p := range r.Curve {
		if p.ServerCPU.Samples == 0 || p.ServerCPU.UserSeconds+p.ServerCPU.SystemSeconds <= 0 {
			t.Errorf("point %d: the server's CPU was not sampled: %+v", p.Connections, p.ServerCPU)
		}
	}
	if left := processesOf(t, nobody.Uid); len(left) > 0 {
		t.Errorf("processes of nobody left after the sweep: %v", left)
	}

	// A harness that is not root may not start its server as another
	// user: the binary, run as nobody, exits 2 before anything boots,
	// saying why. (Root, uid 0, a user that does not exist and an
	// external target are refused by Resolve: TestResolveRefusesBeforeBoot.)
	ceiling := copyExec(t, filepath.Join(bin, "ceiling"), dir)
	cmd := exec.Command(ceiling, "sweep", "--srv-user", "nobody", "--quick")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(flatText(string(out)), "only a harness running as root may start the server as another user") {
		t.Errorf("ceiling sweep --srv-user nobody as nobody: %v\n%s\nwant exit 2 saying why", err, out)
	}
}

// processesOf lists the live processes of uid (pid: command): /proc/PID
// belongs to the process's effective user.
func processesOf(t *testing.T, uid string) []string {
	t.Helper()
	all, err := supervise.AllProcs()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range all {
		st, err := os.Stat("/proc/" + strconv.Itoa(p.Pid))
		if err != nil || p.State == 'Z' {
			continue
		}
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && strconv.FormatUint(uint64(sys.Uid), 10) == uid {
			out = append(out, strconv.Itoa(p.Pid)+": "+p.Comm)
		}
	}
	return out
}
