package load

import (
	"context"
	"errors"

	"github.com/ceiling-bench/ceiling/load/payload"
)

// fanout is the Pusher fan-out scenario (being built).
type fanout struct {
	cfg  *Config
	pool *payload.Pool
}

func newFanout(cfg *Config, pool *payload.Pool) *fanout { return &fanout{cfg: cfg, pool: pool} }

func (f *fanout) Preflight(context.Context) error {
	return errors.New("fanout scenario not built yet")
}
func (f *fanout) Connect(context.Context, int) error       { return errors.New("not built") }
func (f *fanout) Load(context.Context, Window) []*Recorder { return nil }
func (f *fanout) ReadCounters() (int64, int64)             { return 0, 0 }
func (f *fanout) Finish(*Result, *Recorder)                {}
