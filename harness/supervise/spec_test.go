package supervise

import (
	"context"
	"strings"
	"testing"
)

// Start refuses a Spec it cannot run, before it starts anything: no
// program, a log that cannot be opened.
func TestStartRefusesWithoutProgram(t *testing.T) {
	_, err := Start(context.Background(), Spec{Name: "server"})
	if err == nil || !strings.Contains(err.Error(), "server: no program") {
		t.Errorf("err = %v", err)
	}
}

func TestStartBadLogPath(t *testing.T) {
	_, err := Start(context.Background(), Spec{Name: "server", Path: "/bin/true", LogPath: "/nonexistent/dir/x.log"})
	if err == nil || !strings.Contains(err.Error(), "open log") {
		t.Errorf("err = %v", err)
	}
}
