package harness

import (
	"io"
	"sync"

	"github.com/ceiling-bench/ceiling/harness/agents"
	"github.com/ceiling-bench/ceiling/harness/agentside"
)

// remoteHub is AGENTS_LISTEN's hub and its coordinator.log, opened at a
// sweep's first point (open) and kept to its end (close): the remote
// agents stay joined between points.
type remoteHub struct {
	plan *Plan
	mu   sync.Mutex
	hub  *agents.Hub
	log  io.WriteCloser
}

// open is the hub, opened at the first call.
func (h *remoteHub) open() (*agents.Hub, io.Writer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hub != nil {
		return h.hub, h.log, nil
	}
	o := h.plan
	hub, log, err := agentside.OpenHub(o.Agents.Listen, o.Agents.Count, o.Agents.Token.Text(), o.AgentsTLS, o.Point.WorkDir)
	if err != nil {
		return nil, nil, err
	}
	h.hub, h.log = hub, log
	return hub, log, nil
}

// current is the hub once a point opened it, else nil.
func (h *remoteHub) current() *agents.Hub {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hub
}

// close tells the remote agents the sweep is done (they exit).
func (h *remoteHub) close() {
	h.mu.Lock()
	hub, log := h.hub, h.log
	h.hub = nil
	h.mu.Unlock()
	if hub != nil {
		hub.Close()
		log.Close()
	}
}
