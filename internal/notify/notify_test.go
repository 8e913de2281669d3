package notify

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/internal/atomicfile"
)

// bound only fails a test whose event never came; nothing waits for it
// to pass.
const bound = 30 * time.Second

func watch(t *testing.T, gate string) (*Watcher, string) {
	t.Helper()
	dir := t.TempDir()
	w, err := Watch(dir, "measure.marker", gate)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w, dir
}

func await(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(bound):
		t.Fatalf("%s: no event within %s", what, bound)
	}
}

// TestWindowOpensOnTheMarker: the marker created in place (a fake's
// os.WriteFile) or renamed into place (atomicfile, as `ceiling load` and
// the coordinator write it) opens the window; another name does not.
func TestWindowOpensOnTheMarker(t *testing.T) {
	for name, create := range map[string]func(string) error{
		"created": func(p string) error { return os.WriteFile(p, nil, 0o644) },
		"renamed": func(p string) error { return atomicfile.Write(p, nil) },
	} {
		t.Run(name, func(t *testing.T) {
			w, dir := watch(t, "")
			if err := os.WriteFile(filepath.Join(dir, "load.json"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			w.Settle()
			if w.Opened() {
				t.Fatal("opened before the marker")
			}
			if err := create(filepath.Join(dir, "measure.marker")); err != nil {
				t.Fatal(err)
			}
			await(t, w.Window(), "marker")
			if !w.Opened() {
				t.Fatal("Window closed but not Opened")
			}
		})
	}
}

// TestSettleSeesAMarkerNotYetRead: a marker that exists is the window
// open once Settle looked, whether or not its event was read.
func TestSettleSeesAMarkerNotYetRead(t *testing.T) {
	w, dir := watch(t, "")
	if err := w.Close(); err != nil { // nothing reads events from here on
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "measure.marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if w.Opened() {
		t.Fatal("opened with no reader and no Settle")
	}
	w.Settle()
	if !w.Opened() {
		t.Fatal("Settle did not see the marker")
	}
}

// TestGateReady: each appearance of the gate's ready file is one
// receive, pending ones folded into one; without a gate nothing is.
func TestGateReady(t *testing.T) {
	w, dir := watch(t, "start.gate.ready")
	if err := atomicfile.Write(filepath.Join(dir, "start.gate.ready"), nil); err != nil {
		t.Fatal(err)
	}
	await(t, asDone(w.Gate()), "gate ready")
	if w.Opened() {
		t.Fatal("the gate opened the window")
	}
	if err := os.WriteFile(filepath.Join(dir, "measure.marker"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	await(t, w.Window(), "marker")
	select {
	case <-w.Gate():
		t.Fatal("a gate receive with no second ready file")
	default:
	}
}

// asDone turns one receive into a closed channel.
func asDone(ch <-chan struct{}) <-chan struct{} {
	done := make(chan struct{})
	go func() { <-ch; close(done) }()
	return done
}

// TestWatchNeedsTheDirectory: a directory that is not there is an error
// naming it.
func TestWatchNeedsTheDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "gone")
	if _, err := Watch(dir, "m", ""); err == nil {
		t.Fatal("no error")
	}
}
