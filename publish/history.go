package publish

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ceiling-bench/ceiling/harness"
)

// DefaultHistoryMax bounds the history file: 500 entries of about 400 bytes
// is about 200 KB, however long the project lives. Older entries stay in the
// file's git history.
const DefaultHistoryMax = 500

// HistoryEntry is one line of the history file (JSON Lines): the headline
// of one published sweep.
type HistoryEntry struct {
	GitRef         string    `json:"git_ref"`
	FinishedAt     time.Time `json:"finished_at"`
	Generator      string    `json:"generator"`
	Regime         string    `json:"regime"`
	Batch          int       `json:"batch"`
	Connections    int       `json:"connections"`
	ThroughputPerS float64   `json:"throughput_per_s"`
	P99Ns          int64     `json:"p99_ns"`
	NoiseFloorPct  *float64  `json:"noise_floor_pct"`
	Verdict        string    `json:"verdict"`
	LowerBound     bool      `json:"lower_bound"`
	Runner         string    `json:"runner,omitempty"`
}

// EntryOf is the history entry of a result with a clean headline.
func EntryOf(r *harness.Result) HistoryEntry {
	return HistoryEntry{
		GitRef:         r.Meta.GitRef,
		FinishedAt:     r.Meta.FinishedAt.UTC(),
		Generator:      r.Meta.Generator,
		Regime:         r.Regime,
		Batch:          r.Headline.Batch,
		Connections:    r.Headline.Connections,
		ThroughputPerS: r.Headline.ThroughputPerS,
		P99Ns:          r.Headline.LatencyNs.P99,
		NoiseFloorPct:  r.NoiseFloorPct,
		Verdict:        r.Headline.Verdict,
		LowerBound:     r.Headline.LowerBound,
		Runner:         r.Meta.Runner.Name,
	}
}

// ParseHistory reads a history file. Blank lines are skipped; a line that
// is not an entry is an error naming its line number, since silently
// dropping it would lose history on the next write.
func ParseHistory(data []byte, name string) ([]HistoryEntry, error) {
	var out []HistoryEntry
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e HistoryEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		if e.GitRef == "" {
			return nil, fmt.Errorf("%s:%d: git_ref: missing", name, n)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}

// AppendHistory adds e and keeps the newest max entries. An entry for the
// same measured commit (and generator) is replaced rather than added, so
// publishing a commit twice, or re-applying after a rejected push, never
// duplicates it; the replacement moves to the end as the newest.
func AppendHistory(h []HistoryEntry, e HistoryEntry, max int) []HistoryEntry {
	out := make([]HistoryEntry, 0, len(h)+1)
	for _, old := range h {
		if old.GitRef == e.GitRef && old.Generator == e.Generator {
			continue
		}
		out = append(out, old)
	}
	out = append(out, e)
	if max > 0 && len(out) > max {
		out = out[len(out)-max:]
	}
	return out
}

// FormatHistory writes entries as JSON Lines, oldest first, so that each
// publish changes the file by one added line (and one dropped line once it
// is full): small diffs, no rewrite of the whole file.
func FormatHistory(h []HistoryEntry) []byte {
	var b bytes.Buffer
	for _, e := range h {
		line, err := json.Marshal(e)
		if err != nil {
			panic(err) // plain data: cannot fail
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}
