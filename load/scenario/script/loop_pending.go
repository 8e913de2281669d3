package script

import (
	"context"
	"sync"
)

// TEMPORARY until load/evloop lands (merge of wt-evloop replaces this file with loop.go).
type loopEngine struct{}

func (e *loopEngine) counters() (int64, int64) { return 0, 0 }

func (s *scenario) runLoops(ctx context.Context, conns []*conn, done <-chan struct{}, wg *sync.WaitGroup) {
	for _, c := range conns {
		c.goStart(ctx, done, wg)
	}
}

const loopSupported = false
