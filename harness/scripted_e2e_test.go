//go:build e2e

package harness_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/supervise"
	"github.com/ceiling-bench/ceiling/internal/testenv"
	"github.com/ceiling-bench/ceiling/publish"
	"github.com/ceiling-bench/ceiling/result"
)

// TestScriptedServer: one sweep of `ceiling sweep` (the binary) whose
// server is a shell script that does what servers under test do to a
// harness (issue 8, reproduced with real processes; docs/sweep.md,
// "Containment", and docs/targets.md, "Environment" and "Secrets"):
//
//   - it prints every secret it was given (--server-cmd's flag, the
//     target's secret_env and secret values) and dies in its first point,
//     while the generator, a wrapper, prints its arguments (a GENERATOR
//     flag holding a token): no secret is in stdout, stderr, OUT or any
//     file of the work dir, and the failed point's log tail and the
//     command line say REDACTED where they were; a target-file secret it
//     prints as Gson, URLSearchParams and PHP write it (issue 52) is in
//     none of them either, nor in any ref or object of a bare remote the
//     document is published to with `ceiling publish commit --log-tails`;
//   - it dumps its environment and writes to the runner's GITHUB_ENV: it
//     got PATH, its env and its pass_env, none of the runner's files or
//     tokens nor a variable the target does not name;
//   - it fills {port2} and {workdir}: a second refserver listens on
//     {port2}, the only port the readiness probe asks, and a file goes
//     into {workdir}, the point's own directory;
//   - it daemonizes a helper (double fork and setsid), which the
//     supervisor stops with the point, nothing escaping;
//   - from its second point on, it has a process started for it by
//     something outside its tree (a spawner the test runs, as a service
//     manager would), which is killed after its point and reported in the
//     point and a warning;
//   - it ignores SIGTERM (exec'ing the stubborn server) past its 300 ms
//     stop_grace: every point it measured says the server was SIGKILLed.
func TestScriptedServer(t *testing.T) {
	needProcs(t)
	const (
		cmdSecret     = "CMDSECRET-7f3a9c"
		envSecret     = "ENVSECRET-51be02"
		literalSecret = "LITSECRET-ab12cd"
		genToken      = "GENTOKEN-c0ffee"
		ambientToken  = "AMBTOKEN-9d9d9d"
	)
	secrets := []string{cmdSecret, envSecret, literalSecret, genToken, ambientToken, "app-secret"}
	dir, work := t.TempDir(), t.TempDir()
	// A target-file secret the server prints as three encoders of real
	// servers write it (issue 52): its raw bytes appear nowhere, so a
	// gate that tests the bytes passes every form.
	forms := encodedForms(formSecret)
	lines := fmt.Sprintf("{\"token\":\"%s\"}\ntoken=%s\n{\"token\":\"%s\"}\n", forms[0], forms[1], forms[2])
	formsFile := filepath.Join(dir, "forms")
	if err := os.WriteFile(formsFile, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	secrets = append(append(secrets, formSecret), forms...)
	out := filepath.Join(t.TempDir(), "out.json")
	tag := "daemon-" + strconv.FormatInt(time.Now().UnixNano(), 36)

	// The spawner is the test's child, not the harness's: what it starts
	// is outside every supervisor's tree and cgroup. (Its blocking open
	// of the FIFO fails with EINTR when a sleep it started is killed: it
	// tries again.)
	fifo := filepath.Join(dir, "spawn")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	spawner := exec.Command("/bin/sh", "-c", `while [ -p "$0" ]; do read m < "$0" && `+supervise.MarkerEnv+`="$m" sleep 300 & wait $!; done`, fifo)
	spawner.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := spawner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-spawner.Process.Pid, syscall.SIGKILL); _ = spawner.Wait() })

	runnerEnv := filepath.Join(dir, "github_env")
	envDump := filepath.Join(dir, "server-env")
	srv := script(t, dir, "chatty-server", fmt.Sprintf(`addr=$2 secret=$4 work=$6 port2=$8
env > %[1]s
[ -n "$GITHUB_ENV" ] && echo INJECTED=1 >> "$GITHUB_ENV"
echo "$addr $port2" > "$work/ports"
(setsid sleep 300 &)
echo "config: addr=$addr secret=$secret license=$LICENSE token=$CHATTY_API_TOKEN literal=%[4]s"
%[5]s/refserver --addr "127.0.0.1:$port2" &
if [ -e %[6]s/died-once ]; then
  printf '%%s\n' "$%[2]s" > %[3]s
  exec %[7]s --addr "$addr"
fi
touch %[6]s/died-once
%[5]s/refserver --addr "$addr" & pid=$!
sleep 0.8
echo "chatty-server: dying with secret $secret"
cat %[8]s
kill -9 $pid
exit 3
`, envDump, supervise.MarkerEnv, fifo, literalSecret, bin, dir, stubborn(t), formsFile))
	gen := script(t, dir, "chatty-gen", fmt.Sprintf(`echo "generator args: $*"
shift 2
exec %s/ceiling load "$@"
`, bin))
	tg := refTarget(t)
	tg.Env = map[string]string{"LICENSE": envSecret, "TARGET_SETTING": "from the target", "CEILING_TEST_TAG": tag}
	tg.SecretEnv = []string{"LICENSE"}
	tg.SecretValues = []string{literalSecret, formSecret}
	tg.PassEnv = []string{"PASSED_SETTING"}
	tg.Ready = "http://127.0.0.1:{port2}/health"
	tg.StopGrace = "300ms"
	tg.Metrics = nil // the stubborn server's own count is not the subject
	env := []string{"CHATTY_API_TOKEN=" + ambientToken, "PASSED_SETTING=for the server", "UNNAMED_SETTING=not for the server",
		"GITHUB_TOKEN=ghs_a-runner-token-0123456789", "ACTIONS_RUNTIME_TOKEN=a-runtime-token-0123456789"}
	// Each of the runner's files a file of its own: `ceiling sweep` itself
	// writes its summary to GITHUB_STEP_SUMMARY.
	env = append(env, "GITHUB_ENV="+runnerEnv)
	for _, k := range []string{"GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STEP_SUMMARY"} {
		env = append(env, k+"="+filepath.Join(dir, strings.ToLower(k)))
	}
	sweep := func(work, out string) (stdout, stderr bytes.Buffer, err error) {
		cmd := ceilingSweep(t, tg, work, out, env,
			"--batch-ladder", "10", "--conns-ladder", "10=2,4", "--duration", "1s",
			"--server-cmd", srv+" --addr {addr} --secret "+cmdSecret+" --workdir {workdir} --port2 {port2}",
			"--generator", gen+" --api-token "+genToken)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		t.Logf("exit %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
		return stdout, stderr, err
	}
	stdout, stderr, err := sweep(work, out)
	r := readResult(t, out)
	if len(r.Curve) < 2 || r.Curve[0].Status != result.StatusFailed {
		t.Fatalf("want the first point failed by the server and the next measured, curve %+v", r.Curve)
	}
	for _, p := range r.Curve {
		if p.Contended {
			t.Logf("point %d ran on contended CPUs (not this test's subject): %s", p.Index, result.Contention(p.ServerCPU, p.GeneratorCPU))
		}
	}

	t.Run("secrets", func(t *testing.T) {
		// The leak routes are exercised, so the test can fail: the
		// failed point's tail is the config line, the command carries
		// the flag.
		if tail := r.Curve[0].LogTail; !strings.Contains(tail, "config:") || !strings.Contains(tail, "secret=REDACTED") {
			t.Errorf("log tail %q: want the config line, redacted", tail)
		}
		if cmdline := strings.Join(r.Meta.Command, " "); !strings.Contains(cmdline, "--secret REDACTED") || !strings.Contains(cmdline, "--api-token REDACTED") {
			t.Errorf("meta.command %q: want the flag values masked", cmdline)
		}
		check := func(what string, data []byte) {
			for _, s := range leaks(data, secrets) {
				t.Errorf("%s holds the secret %s", what, s)
			}
		}
		check("stdout", stdout.Bytes())
		check("stderr", stderr.Bytes())
		check("OUT", mustRead(t, out))
		files := 0
		_ = filepath.WalkDir(work, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files++
				check(p, mustRead(t, p))
			}
			return nil
		})
		if files < 6 {
			t.Errorf("only %d files in the work dir: the points did not run", files)
		}
		// The server's own log had the secret while the point ran; it
		// was redacted when the point ended.
		logs, _ := filepath.Glob(filepath.Join(work, "point-001-*", "server.log"))
		if len(logs) != 1 || !bytes.Contains(mustRead(t, logs[0]), []byte("secret=REDACTED")) {
			t.Errorf("point 1 server.log %v: want the printed config, redacted", logs)
		}
	})
	t.Run("publish", func(t *testing.T) {
		// The document, its failed point's log tail included, pushed to
		// a data branch as `ceiling publish commit --log-tails` does: no
		// form of a secret reaches any ref or object of the remote. Only
		// a publishable document is pushed: one whose headline ran on
		// contended CPUs is refused before any check of its secrets.
		// A contended one is swept again (its server dying once more in
		// its first point), twice at most, once the steal has calmed.
		doc := out
		for attempt := 1; err != nil; attempt++ {
			if !slices.ContainsFunc(readResult(t, doc).Curve, func(p result.Point) bool { return p.Contended }) {
				t.Fatalf("the sweep exited %v: its document is not publishable", err)
			}
			if attempt == 3 {
				notQuiet(t, "the sweep exited %v with contended points %d times: its document is not publishable", err, attempt)
			}
			testenv.WaitForSteal(t, 3)
			_ = os.Remove(filepath.Join(dir, "died-once"))
			doc = filepath.Join(t.TempDir(), "out.json")
			_, _, err = sweep(t.TempDir(), doc)
		}
		root := t.TempDir()
		git := func(dir string, args ...string) string {
			t.Helper()
			out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("git %v: %v\n%s", args, err, out)
			}
			return string(out)
		}
		git(root, "init", "--quiet", "--bare", "remote.git")
		git(root, "clone", "--quiet", "remote.git", "work")
		repo, remote := filepath.Join(root, "work"), filepath.Join(root, "remote.git")
		git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "--allow-empty", "-m", "first")
		git(repo, "push", "--quiet", "origin", "HEAD:main")
		// The commit the sweep measured (this checkout's), which publish
		// finds in the repository it publishes from.
		git(repo, "fetch", "--quiet", strings.TrimSpace(git(".", "rev-parse", "--show-toplevel")), readResult(t, doc).Meta.GitRef)
		tgFile := filepath.Join(root, "target.json")
		data, _ := json.Marshal(tg)
		if err := os.WriteFile(tgFile, data, 0o644); err != nil {
			t.Fatal(err)
		}
		pub := exec.Command(filepath.Join(bin, "ceiling"), "publish", "commit", "--repo", repo, "--log-tails", "--target", tgFile, doc)
		pub.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		got, err := pub.CombinedOutput()
		if err != nil {
			t.Fatalf("publish commit: %v\n%s", err, got)
		}
		for _, s := range leaks(got, secrets) {
			t.Errorf("publish's output holds %q", s)
		}
		for _, s := range leaks([]byte(git(remote, "log", "--all", "--format=%B")), secrets) {
			t.Errorf("a commit message holds %q", s)
		}
		tails := 0
		for _, ref := range strings.Fields(git(remote, "for-each-ref", "--format=%(refname)")) {
			for _, f := range strings.Fields(git(remote, "ls-tree", "-r", "--name-only", ref)) {
				data := []byte(git(remote, "show", ref+":"+f))
				tails += bytes.Count(data, []byte(`"log_tail"`))
				for _, s := range leaks(data, secrets) {
					t.Errorf("%s:%s holds %q", ref, f, s)
				}
			}
		}
		if tails == 0 {
			t.Errorf("no log tail reached the remote: nothing was checked")
		}
	})
	t.Run("environment", func(t *testing.T) {
		b, err := os.ReadFile(envDump)
		if err != nil {
			t.Fatalf("the server did not start: %v", err)
		}
		env := "\n" + string(b)
		for _, name := range []string{"GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_TOKEN", "ACTIONS_RUNTIME_TOKEN", "UNNAMED_SETTING", "CHATTY_API_TOKEN"} {
			if strings.Contains(env, "\n"+name+"=") {
				t.Errorf("the server's environment holds %s", name)
			}
		}
		for _, want := range []string{"PATH=", "PASSED_SETTING=for the server", "TARGET_SETTING=from the target"} {
			if !strings.Contains(env, "\n"+want) {
				t.Errorf("the server's environment has no %s", want)
			}
		}
		if b, err := os.ReadFile(runnerEnv); err == nil {
			t.Errorf("the server wrote the runner's GITHUB_ENV: %q", b)
		}
	})
	t.Run("placeholders", func(t *testing.T) {
		files, _ := filepath.Glob(filepath.Join(work, "point-*", "ports"))
		if len(files) != len(r.Curve) {
			t.Fatalf("%d ports files in the point dirs for %d points", len(files), len(r.Curve))
		}
		for _, f := range files {
			fields := strings.Fields(string(mustRead(t, f)))
			if len(fields) != 2 {
				t.Fatalf("%s: %q", f, fields)
			}
			_, port, _ := strings.Cut(fields[0], ":")
			if port == fields[1] || fields[1] == "" || fields[1] == "0" {
				t.Errorf("%s: {addr} and {port2} filled as %q", f, fields)
			}
		}
	})
	t.Run("containment", func(t *testing.T) {
		if left := withEnv("CEILING_TEST_TAG", tag); len(left) > 0 {
			t.Errorf("%d daemon(s) of %d points outlived the run: %v", len(left), len(r.Curve), left)
		}
		var pids []int
		for _, p := range r.Curve[1:] {
			if p.Status != result.StatusOK {
				t.Errorf("point %d: %s: %s", p.Index, p.Status, p.FailReason)
				continue
			}
			// The daemon stayed in the supervisor's tree: only the
			// spawned sleep escaped.
			if len(p.Escaped) != 1 || p.Escaped[0].Command != "sleep" {
				t.Errorf("point %d: escaped %+v, want the one spawned sleep", p.Index, p.Escaped)
				continue
			}
			pids = append(pids, p.Escaped[0].Pid)
			if !slices.ContainsFunc(r.Warnings, func(w string) bool {
				return strings.HasPrefix(w, "point "+strconv.Itoa(p.Index)+": 1 process(es) escaped the supervisor") && strings.Contains(w, strconv.Itoa(p.Escaped[0].Pid))
			}) {
				t.Errorf("no warning for point %d's escaped process in %q", p.Index, r.Warnings)
			}
		}
		for _, pid := range pids {
			if supervise.Alive(pid) {
				t.Errorf("escaped process %d still alive after the run", pid)
			}
		}
		// The document with its escaped processes is one publish
		// accepts (sweep.schema.json: escaped[].pid, escaped[].command).
		data := mustRead(t, out)
		if _, err := publish.Read(data, out); err != nil {
			t.Errorf("publish.Read rejects the document: %v", err)
		}
		bad := strings.Replace(string(data), `"command": "sleep"`, `"command": 7`, 1)
		if _, err := publish.Read([]byte(bad), out); err == nil || !strings.Contains(err.Error(), "escaped[0].command") {
			t.Errorf("publish.Read of an escaped command that is no string: %v, want an error naming escaped[0].command", err)
		}
	})
	t.Run("escalation", func(t *testing.T) {
		for _, p := range r.Curve[1:] {
			if len(p.Escalated) != 1 || p.Escalated[0] != "server" {
				t.Errorf("point %d escalated %v, want [server]", p.Index, p.Escalated)
			}
			if !slices.ContainsFunc(r.Warnings, func(w string) bool {
				return strings.HasPrefix(w, fmt.Sprintf("point %d: server did not exit within its grace after SIGTERM", p.Index))
			}) {
				t.Errorf("warnings %q lack point %d's escalation", r.Warnings, p.Index)
			}
		}
	})
}

// formSecret is a secret with the characters encoders write differently:
// '=', '~', '/', a quote and a letter outside ASCII.
const formSecret = "FRM=SEC~RET/\u00e9'9b"

// encodedForms are s as three encoders write it in a string (issue 52):
// Gson's default HTML-safe JSON (= and ' as \u003d and \u0027),
// URLSearchParams and Java's URLEncoder (~ as %7E), and PHP's json_encode
// with JSON_UNESCAPED_UNICODE (raw UTF-8, / as \/).
func encodedForms(s string) []string {
	gson := strings.NewReplacer("=", `\u003d`, "'", `\u0027`).Replace(s)
	form := strings.ReplaceAll(url.QueryEscape(s), "~", "%7E")
	php := strings.ReplaceAll(s, "/", `\/`)
	return []string{gson, form, php}
}

// leaks are the needles found in data: in its bytes, and, where data is
// JSON, in every string it holds once decoded (a log tail's "\u003d"
// is "\\u003d" in the document's bytes).
func leaks(data []byte, needles []string) []string {
	texts := []string{string(data)}
	var doc any
	if json.Unmarshal(data, &doc) == nil {
		var walk func(v any)
		walk = func(v any) {
			switch v := v.(type) {
			case string:
				texts = append(texts, v)
			case []any:
				for _, e := range v {
					walk(e)
				}
			case map[string]any:
				for k, e := range v {
					texts = append(texts, k)
					walk(e)
				}
			}
		}
		walk(doc)
	}
	var found []string
	for _, n := range needles {
		if slices.ContainsFunc(texts, func(t string) bool { return strings.Contains(t, n) }) {
			found = append(found, n)
		}
	}
	return found
}
