//go:build !linux

package load

// preciseTimer falls back to Go timers where there is no timerfd (see
// clock_linux.go): the schedule still holds, with the runtime's timer
// granularity.
type preciseTimer struct{ fallback Sleeper }

func newPreciseTimer() *preciseTimer { return &preciseTimer{} }

func (p *preciseTimer) sleep(d int64, done <-chan struct{}) bool {
	return p.fallback.Until(Mono()+d, done)
}

func (p *preciseTimer) cancel() {}

func (p *preciseTimer) close() {
	if p.fallback.t != nil {
		p.fallback.t.Stop()
	}
}
