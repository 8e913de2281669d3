package harness

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/ceiling-bench/ceiling/harness/outfile"
	"github.com/ceiling-bench/ceiling/harness/verdict"
	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/result"
)

// checkpointRunner rewrites OUT before every point as this run's partial
// document (see Run), then runs the point. The sweep does not touch r
// while points run (a duet's two run at once, and both checkpoint: mu
// keeps their writes, and the masking of r's shared slices, apart).
type checkpointRunner struct {
	PointRunner
	r       *result.Result
	out     string
	secrets *redact.Set
	stderr  io.Writer
	mu      sync.Mutex
	warned  bool
}

func (c *checkpointRunner) RunPoint(ctx context.Context, spec PointSpec) verdict.Outcome {
	c.checkpoint(spec)
	return c.PointRunner.RunPoint(ctx, spec)
}

func (c *checkpointRunner) checkpoint(spec PointSpec) {
	c.mu.Lock()
	defer c.mu.Unlock()
	doc := *c.r
	doc.Curve = slices.Clone(c.r.Curve)
	doc.Warnings = slices.Clone(c.r.Warnings)
	doc.Ceilings = slices.Clone(c.r.Ceilings)
	if c.r.HeadroomProbe != nil {
		h := *c.r.HeadroomProbe
		doc.HeadroomProbe = &h
	}
	doc.Partial = true
	doc.PartialReason = fmt.Sprintf("sweep in progress (pid %d): %d points done, point %d running; if this stays, the harness was killed before it finished",
		os.Getpid(), len(doc.Curve), spec.Index)
	doc.Summarize()
	result.RedactResult(&doc, c.secrets)
	if err := outfile.Write(c.out, &doc); err != nil && !c.warned {
		c.warned = true
		fmt.Fprintf(c.stderr, "ceiling sweep: warning: cannot write the in-progress result: %v\n", err)
	}
}

// checkpointArms is a two-arm sweep's runner: its points behind the
// checkpoint, its warm arms' boots and stops the runner's own.
type checkpointArms struct {
	*checkpointRunner
	twoArmSide
}

// clearStalePoints removes the point directories (point-NNN-*) an earlier
// run left in a reused work dir, and nothing else; it returns how many.
func clearStalePoints(dir string) (int, error) {
	old, err := filepath.Glob(filepath.Join(dir, "point-[0-9][0-9][0-9]*"))
	if err != nil {
		return 0, err
	}
	for _, p := range old {
		if err := os.RemoveAll(p); err != nil {
			return 0, err
		}
	}
	return len(old), nil
}
