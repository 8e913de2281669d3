// Package notify is how the harness learns that a point's generator
// opened its window: the kernel tells it. The harness watches the
// point's directory (inotify, Linux) before the generator starts, and
// the point waits on what the watch delivers: the measure marker (the
// generator contract's signal: docs/ARCHITECTURE.md) appearing, and a
// duet generator's FILE.ready, where it once looked for the marker
// every 20 ms.
//
// The contract is unchanged: any generator that creates the marker,
// directly or by an atomic rename (internal/atomicfile), is heard, a
// GENERATOR wrapper or a third-party generator as much as `ceiling
// load` or the agents' coordinator; nothing new is passed to it.
package notify

import (
	"os"
	"path/filepath"
	"sync"
)

// Watcher is a point's watch on its directory for two names: the
// window's marker and the start gate's ready file.
type Watcher struct {
	dir            string
	marker, gate   string // base names; gate "" for none
	f              *os.File
	window, gateCh chan struct{}
	done           chan struct{} // the reader returned
	once           sync.Once
}

// Watch watches dir, which must exist, for marker and gate (base names
// in it; gate "" for none) being created or renamed into place.
func Watch(dir, marker, gate string) (*Watcher, error) {
	w := &Watcher{dir: dir, marker: marker, gate: gate, window: make(chan struct{}), gateCh: make(chan struct{}, 1), done: make(chan struct{})}
	f, err := watchDir(dir)
	if err != nil {
		return nil, err
	}
	w.f = f
	go w.read()
	return w, nil
}

// saw is told each name the kernel reported; overflow (events lost)
// looks at both names once.
func (w *Watcher) saw(name string, overflow bool) {
	if name == w.marker || overflow && exists(filepath.Join(w.dir, w.marker)) {
		w.open()
	}
	if w.gate != "" && (name == w.gate || overflow && exists(filepath.Join(w.dir, w.gate))) {
		select {
		case w.gateCh <- struct{}{}:
		default: // one pending is enough: the gate reads every half
		}
	}
}

func (w *Watcher) open() { w.once.Do(func() { close(w.window) }) }

// Window is closed once the marker appeared.
func (w *Watcher) Window() <-chan struct{} { return w.window }

// Gate receives once for each appearance of the gate's ready file not
// yet taken.
func (w *Watcher) Gate() <-chan struct{} { return w.gateCh }

// Settle makes Opened final once something else ended the wait (the
// generator exited, the deadline): the kernel reported the marker when
// it appeared, but the reader may not have taken that event yet, so the
// marker is looked at once, directly. A marker created before Settle is
// never taken for one that was not.
func (w *Watcher) Settle() {
	if exists(filepath.Join(w.dir, w.marker)) {
		w.open()
	}
}

// Opened reports whether the window opened, without waiting.
func (w *Watcher) Opened() bool {
	select {
	case <-w.window:
		return true
	default:
		return false
	}
}

// Close ends the watch.
func (w *Watcher) Close() error {
	err := w.f.Close()
	<-w.done
	return err
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
