package load

import (
	"context"
	"sync"
	"time"
)

// ConnectFunc opens (and, for fanout, subscribes) connection i.
type ConnectFunc func(ctx context.Context, i int) error

// connectAll opens n connections with the configured strategy and returns
// each one's error (nil when it opened):
//
//	bounded      at most concurrency connects in flight (default 32)
//	stagger      connection i starts i*stagger after the first
//	all-at-once  every connect at once: the storm, for reproducing it
//
// Connecting is how a server's per-connection cost (TLS, auth) is paced,
// so it is part of the method, and bounded is the default.
func connectAll(ctx context.Context, strategy string, concurrency int, stagger time.Duration, n int, connect ConnectFunc) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	var sem chan struct{}
	if strategy == ConnectBounded {
		sem = make(chan struct{}, concurrency)
	}
	start := time.Now()
	for i := 0; i < n; i++ {
		acquired := sem == nil
		if !acquired && ctx.Err() == nil {
			select {
			case sem <- struct{}{}:
				acquired = true
			case <-ctx.Done():
			}
		}
		if !acquired || ctx.Err() != nil {
			if acquired && sem != nil {
				<-sem
			}
			for j := i; j < n; j++ {
				errs[j] = ctx.Err()
			}
			break
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			if sem != nil {
				defer func() { <-sem }()
			}
			if strategy == ConnectStagger && i > 0 {
				t := time.NewTimer(time.Until(start.Add(time.Duration(i) * stagger)))
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					errs[i] = ctx.Err()
					return
				}
			}
			errs[i] = connect(ctx, i)
		}(i)
	}
	wg.Wait()
	return errs
}
