package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/target"
	_ "github.com/ceiling-bench/ceiling/load/scenario/all" // the blocks a target may hold
)

// TestTargetFileLoads: the ConfigMap's target file is one the harness
// reads: every field known, its blocks valid. The only complaints allowed
// are those of a target without a command, which the harness accepts once
// it has AGENTS_LISTEN (issue 13, wt-agents2): nothing to boot.
func TestTargetFileLoads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "target.json")
	if err := os.WriteFile(path, []byte(TargetJSON(Defaults())), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := target.Load(path)
	if err == nil {
		return
	}
	rest := strings.TrimPrefix(err.Error(), "TARGET "+path+": ")
	for _, line := range strings.Split(rest, "\n") {
		if line != "command: empty" && !strings.HasPrefix(line, "command/env: no {port} or {addr} placeholder") {
			t.Errorf("the harness refuses the target file for more than its missing command: %s", line)
		}
	}
}
