package harness

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/harness/knob"
	"github.com/ceiling-bench/ceiling/harness/scrape"
	"github.com/ceiling-bench/ceiling/harness/target"
	"github.com/ceiling-bench/ceiling/result"
)

func TestProfilePathAndSeconds(t *testing.T) {
	spec := PointSpec{Index: 7, Role: result.RoleAARepeat, Key: result.PointKey{Batch: 100, Connections: 256, Rep: 2}}
	if got, want := ProfilePath("prof", spec), filepath.Join("prof", "point-7-b100-c256-r2.pprof"); got != want {
		t.Errorf("ProfilePath = %q, want %q", got, want)
	}
	for d, want := range map[time.Duration]int{0: 1, 300 * time.Millisecond: 1, time.Second: 1, 2500 * time.Millisecond: 2, 10 * time.Second: 10} {
		if got := target.ExpandProfile("{seconds}", target.Addr{}, d); got != strconv.Itoa(want) {
			t.Errorf("{seconds} of %s = %s, want %d", d, got, want)
		}
	}
	if got := target.ExpandProfile("http://{addr}/debug/pprof/profile?seconds={seconds}", target.Addr{Port: 8080}, 3*time.Second); got != "http://127.0.0.1:8080/debug/pprof/profile?seconds=3" {
		t.Errorf("expandProfile = %q", got)
	}
}

// TestCaptureProfile: with --profile the profile URL is fetched over the
// window, {seconds} filled, and the body saved where profile_file says.
func TestCaptureProfile(t *testing.T) {
	ms := newMetricsServer(t)
	ms.set(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/debug/pprof/profile" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintf(w, "profile over %s s", r.URL.Query().Get("seconds"))
	})
	dir := filepath.Join(t.TempDir(), "profiles") // made by the fetch
	tg := target.Spec{Profile: &target.ProfileSpec{URL: "http://{addr}/debug/pprof/profile?seconds={seconds}&token=prof-token-99"}}
	out := runCapture(capturePoint(tg, ms.port(t), 2500*time.Millisecond, dir), 0)
	want := filepath.Join(dir, "point-3-b10-c64-r1.pprof")
	if out.ProfileError != "" || out.ProfileFile != want {
		t.Fatalf("profile file %q, error %q; want %q", out.ProfileFile, out.ProfileError, want)
	}
	if b, err := os.ReadFile(want); err != nil || string(b) != "profile over 2 s" {
		t.Errorf("saved %q, %v", b, err)
	}
	if out.ServerMetrics != nil {
		t.Errorf("server metrics %+v without metrics", out.ServerMetrics)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestCaptureProfileFails: a failed fetch is recorded (naming the status,
// never the query), and leaves no file, not even an earlier run's.
func TestCaptureProfileFails(t *testing.T) {
	ms := newMetricsServer(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "point-3-b10-c64-r1.pprof")
	for _, tt := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"status", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "profiling disabled", http.StatusForbidden)
		}, "status 403 Forbidden"},
		{"empty", func(w http.ResponseWriter, r *http.Request) {}, "empty body"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte("an earlier run's"), 0o644); err != nil {
				t.Fatal(err)
			}
			ms.set(tt.handler)
			tg := target.Spec{Profile: &target.ProfileSpec{URL: "http://{addr}/p?seconds={seconds}&token=prof-token-99"}}
			out := runCapture(capturePoint(tg, ms.port(t), time.Second, dir), 0)
			want := "GET " + ms.URL + "/p?(query hidden): " + tt.want
			if out.ProfileError != want || out.ProfileFile != "" {
				t.Errorf("profile %q, error %q; want error %q", out.ProfileFile, out.ProfileError, want)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("%s is there after a failed fetch: %v", path, err)
			}
		})
	}
	t.Run("no profile url", func(t *testing.T) {
		out := runCapture(capturePoint(target.Spec{}, ms.port(t), time.Second, dir), 0)
		if out.ProfileError != `the target has no "profile" url` {
			t.Errorf("error %q", out.ProfileError)
		}
	})
}

// TestCaptureProfileTooLarge: the body is bounded by scrape.MaxProfileBytes.
func TestCaptureProfileTooLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 64 MiB")
	}
	ms := newMetricsServer(t)
	ms.set(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 1<<20)
		for range scrape.MaxProfileBytes>>20 + 1 {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	dir := t.TempDir()
	out := runCapture(capturePoint(target.Spec{Profile: &target.ProfileSpec{URL: "http://{addr}/p"}}, ms.port(t), time.Second, dir), 0)
	if !strings.Contains(out.ProfileError, fmt.Sprintf("larger than %d bytes", scrape.MaxProfileBytes)) || out.ProfileFile != "" {
		t.Errorf("profile %q, error %q", out.ProfileFile, out.ProfileError)
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("files left: %v", left)
	}
}

// TestProfileNeedsTheTargetsURL: a target without "profile" is refused
// with --profile.
func TestProfileNeedsTheTargetsURL(t *testing.T) {
	o := knob.DefaultOptions(false)
	o.ProfileDir = "out/prof"
	err := checkTargetFor(target.Spec{}, &o)
	if err == nil || !strings.Contains(err.Error(), `the target has no "profile" url`) {
		t.Errorf("CheckFor with --profile and no profile url: %v", err)
	}
	if err := checkTargetFor(target.Spec{Profile: &target.ProfileSpec{URL: "http://{addr}/p"}}, &o); err != nil {
		t.Errorf("CheckFor: %v", err)
	}
}
