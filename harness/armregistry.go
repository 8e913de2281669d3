package harness

import "sync"

// armRegistry holds a two-arm sweep's warm arms (warmarm.go): each arm's
// servers kept up between points, and how often it booted.
type armRegistry struct {
	mu   sync.Mutex
	live map[string]*liveArm
}

// liveArm is an arm's servers kept up (nil when none are), and its
// boots so far, which name its directory.
type liveArm struct {
	set  *serverSet
	boot int
}

// get is arm's entry, or nil before its first boot.
func (r *armRegistry) get(arm string) *liveArm {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[arm]
}

// put makes l arm's entry.
func (r *armRegistry) put(arm string, l *liveArm) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = map[string]*liveArm{}
	}
	r.live[arm] = l
}

// takeAll empties the registry and returns the arms whose servers were
// up.
func (r *armRegistry) takeAll() []*liveArm {
	r.mu.Lock()
	defer r.mu.Unlock()
	var up []*liveArm
	for _, l := range r.live {
		if l != nil && l.set != nil {
			up = append(up, l)
		}
	}
	r.live = nil
	return up
}
