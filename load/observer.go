package load

import (
	"context"
	"fmt"

	"github.com/ceiling-bench/ceiling/internal/atomicfile"
)

// observer does what happens at the window's edges, off the hot path: at
// Start it creates the measure marker and snapshots the generator's own
// counters (CPU, scheduler, read syscalls); at End it snapshots them again.
type observer struct {
	done      chan struct{}
	stats     selfStats
	markerErr error
}

func startObserver(ctx context.Context, w Window, marker string, sc Scenario) *observer {
	o := &observer{done: make(chan struct{})}
	go func() {
		defer close(o.done)
		stop := ctx.Done()
		if !SleepUntil(w.Start, stop) {
			return
		}
		o.stats.start = snapshot(sc)
		if marker != "" {
			o.markerErr = createMarker(marker)
		}
		if !SleepUntil(w.End, stop) {
			o.stats.end = snapshot(sc)
			return
		}
		o.stats.end = snapshot(sc)
	}()
	return o
}

func (o *observer) wait() (selfStats, error) {
	<-o.done
	return o.stats, o.markerErr
}

// createMarker creates the empty marker file atomically. The harness
// starts its CPU sampling when it appears.
func createMarker(path string) error {
	if err := atomicfile.Write(path, nil); err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	return nil
}
