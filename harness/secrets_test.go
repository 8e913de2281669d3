package harness

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ceiling-bench/ceiling/internal/redact"
	"github.com/ceiling-bench/ceiling/result"
)

func TestRedactResultEveryString(t *testing.T) {
	const sec = "s3cr3t-value-42"
	set := redact.New(sec)
	r := &result.Result{
		Regime:        "x " + sec,
		PartialReason: sec,
		Warnings:      []string{"w " + sec},
		Curve: []result.Point{{
			FailReason: "reason " + sec, VerdictReason: sec, LogTail: "config: secret=" + sec + "\n",
			Escalated: []string{sec},
		}},
		HeadroomProbe: &result.HeadroomProbe{Conclusion: sec},
		Config:        result.Config{ConnsLadders: map[string][]int{"10": {1}}},
	}
	r.Meta.Command = []string{"ceiling", "sweep", "--server-cmd", "srv --secret " + sec, "--token", "tiny"}
	r.Meta.Target = result.Target{Command: []string{"srv", "--secret", sec}, URL: "ws://u:" + sec + "@h/"}
	r.Meta.GitRef = sec
	result.RedactResult(r, set)
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if set.Contains(data) || bytes.Contains(data, []byte("tiny")) {
		t.Fatalf("secret left in %s", data)
	}
	if n := bytes.Count(data, []byte(redact.Mask)); n < 12 {
		t.Errorf("%d masks in %s, want every field masked", n, data)
	}
	if got := r.Meta.Command[3]; got != "srv --secret REDACTED" {
		t.Errorf("meta.command element %q", got)
	}
	if r.Config.ConnsLadders["10"][0] != 1 {
		t.Error("a non-string value changed")
	}
}
