package main

import (
	"io"
	"strings"
	"testing"
)

// TestK8sNeedsItsBinary: `ceiling k8s` runs ceiling-k8s from beside the
// ceiling binary; the test binary has none beside it, and says how to
// build it.
func TestK8sNeedsItsBinary(t *testing.T) {
	err := run([]string{"k8s", "render"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "ceiling-k8s is not built") {
		t.Fatalf("err %v, want one saying ceiling-k8s is not built", err)
	}
}
