package nats

import (
	"testing"
	"time"
)

// TestHeldPulls: a pull without responders that a disconnect followed
// within shutdownGrace was the server going away; one no disconnect
// followed, or one only a later disconnect did, is an error.
func TestHeldPulls(t *testing.T) {
	s := int64(time.Second)
	var h held
	h.pull(10 * s) // the server shutting down: gone at 10.5 s
	h.pull(20 * s) // nothing followed: an error
	h.pull(30 * s) // gone only at 33 s, past the grace: an error
	h.disconnected(10*s + s/2)
	h.disconnected(33 * s)
	if got := h.errors(); got != 2 {
		t.Errorf("errors = %d, want 2", got)
	}
	var none held
	if none.errors() != 0 {
		t.Error("no pull, errors")
	}
}
