package harness

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/result"
)

// duetPartners is a duet's two points: each waits in its point for the
// other, as a duet's start gate makes them, and measures nothing.
type duetPartners struct{ both sync.WaitGroup }

func (d *duetPartners) RunPoint(ctx context.Context, spec PointSpec) verdict.Outcome {
	d.both.Done()
	d.both.Wait()
	return verdict.Outcome{FailReason: "not measured"}
}

// A duet's two points run at once, and each checkpoints OUT as it
// begins: the document's masking writes the server command lines it
// shares with the result, so the two checkpoints are one at a time. In
// CI run 5 go test -race caught two at once. Here the points are started
// together and nothing but the checkpoint's own lock orders them.
func TestCheckpointTwoDuetPointsAtOnce(t *testing.T) {
	const secret = "duet-secret-value"
	r := &result.Result{}
	r.Meta.Target.Servers = []result.TargetServer{{Name: "node", Command: []string{"refserver", "--secret", secret}}}
	d := &duetPartners{}
	out := filepath.Join(t.TempDir(), "ceiling.json")
	var stderr bytes.Buffer
	cp := &checkpointRunner{PointRunner: d, r: r, out: out, secrets: redact.New(secret), stderr: &stderr}

	// The sweep's first point, alone.
	d.both.Add(1)
	cp.RunPoint(context.Background(), PointSpec{Index: 1})

	d.both.Add(2)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 2; i <= 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			cp.RunPoint(context.Background(), PointSpec{Index: i, Arm: []string{result.ArmBase, result.ArmHead}[i-2]})
		}()
	}
	close(start)
	wg.Wait()

	got := readResult(t, out)
	want := []string{"refserver", "--secret", redact.Mask}
	if !got.Partial || len(got.Meta.Target.Servers) != 1 || !slices.Equal(got.Meta.Target.Servers[0].Command, want) {
		t.Errorf("OUT: partial %v, servers %+v; want the partial document, the server's command %q", got.Partial, got.Meta.Target.Servers, want)
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
}
