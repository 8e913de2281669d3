package publish

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/ceiling-bench/ceiling/result"
)

// DefaultHistoryMax bounds the history file: 500 entries of about 700
// bytes (the headline, and a ceiling per batch size of about 130 bytes each)
// is about 350 KB, however long the project lives. Older entries stay in
// the file's git history.
const DefaultHistoryMax = 500

// HistoryEntry is one line of the history file (JSON Lines): the headline
// of one published sweep, and since the results page, every batch size's
// ceiling, the objective and the two-arm verdict.
//
// Every field added after the first version is omitempty and optional on
// reading: an entry written before reads with Ceilings nil (Trend then
// shows its headline as its headline batch's ceiling) and no objective.
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

	Scenario string `json:"scenario,omitempty"`
	// Target is the server's name (meta.target.name), shown, never
	// compared: a name is a label (ceiling compare names each arm by its
	// commit, HEAD@061cb02), not a regime.
	Target string `json:"target,omitempty"`
	// Machine is what the run ran on: the CPU model and how many logical
	// CPUs (meta.hardware). With the regime's scenario and cores it says
	// whether two entries are comparable (Trend).
	Machine string `json:"machine,omitempty"`
	// Objective is the run's objective (harness Config.Objective): with
	// one, a ceiling is the point with the most connections meeting it.
	Objective string `json:"objective,omitempty"`
	// Comparison is a two-arm sweep's headline verdict of head against
	// base (faster, slower, within_noise, cannot_conclude); empty otherwise.
	Comparison string `json:"comparison,omitempty"`
	// Partial: the sweep was interrupted and holds only finished points.
	Partial bool `json:"partial,omitempty"`
	// Ceilings is every batch size's ceiling, ascending batch as in the
	// result; nil in entries written before it existed.
	Ceilings []HistoryCeiling `json:"ceilings,omitempty"`
	// Memory is each side's memory per connection at the headline's
	// point; nil where it was not measured (and before it was).
	Memory *HistoryMemory `json:"memory,omitempty"`
}

// HistoryMemory is the headline point's memory per connection on both
// sides (result.Memory's per_connection_bytes), in its measure.
type HistoryMemory struct {
	Measure            string   `json:"measure"`
	ServerPerConnBytes *float64 `json:"server_per_connection_bytes"`
	GenPerConnBytes    *float64 `json:"generator_per_connection_bytes"`
}

// historyMemory is the headline point's memory, or nil.
func historyMemory(r *result.Result) *HistoryMemory {
	p := r.HeadlinePoint()
	if p == nil {
		return nil
	}
	srv, okS := p.ServerMemory.PerConnection()
	gen, okG := p.GeneratorMemory.PerConnection()
	if !okS && !okG {
		return nil
	}
	m := &HistoryMemory{}
	if okS {
		m.Measure, m.ServerPerConnBytes = p.ServerMemory.Measure, &srv
	}
	if okG {
		m.GenPerConnBytes = &gen
		if m.Measure == "" {
			m.Measure = p.GeneratorMemory.Measure
		}
	}
	return m
}

// HistoryCeiling is one batch size's ceiling in a history entry
// (result.BatchCeiling without what a trend does not plot).
type HistoryCeiling struct {
	Batch          int     `json:"batch"`
	Found          bool    `json:"found"` // false: no clean point at this batch
	ThroughputPerS float64 `json:"throughput_per_s,omitempty"`
	Connections    int     `json:"connections,omitempty"`
	P99Ns          int64   `json:"p99_ns,omitempty"`
	Verdict        string  `json:"verdict,omitempty"`
	LowerBound     bool    `json:"lower_bound,omitempty"`
	AtLadderTop    bool    `json:"at_ladder_top,omitempty"`
}

// EntryOf is the history entry of a result with a clean headline.
func EntryOf(r *result.Result) HistoryEntry {
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
		Scenario:       r.Config.Scenario,
		Target:         r.Meta.Target.Name,
		Machine:        MachineOf(r),
		Objective:      r.Config.Objective,
		Comparison:     comparisonVerdict(r),
		Partial:        r.Partial,
		Ceilings:       historyCeilings(r.Ceilings),
		Memory:         historyMemory(r),
	}
}

func comparisonVerdict(r *result.Result) string {
	if r.Comparison == nil {
		return ""
	}
	return r.Comparison.Headline.Verdict
}

func historyCeilings(cs []result.BatchCeiling) []HistoryCeiling {
	if len(cs) == 0 {
		return nil
	}
	out := make([]HistoryCeiling, len(cs))
	for i, c := range cs {
		out[i] = HistoryCeiling{Batch: c.Batch, Found: c.Found}
		if c.Found {
			out[i] = HistoryCeiling{
				Batch: c.Batch, Found: true, ThroughputPerS: c.ThroughputPerS, Connections: c.Connections,
				P99Ns: c.LatencyNs.P99, Verdict: c.Verdict, LowerBound: c.LowerBound, AtLadderTop: c.AtLadderTop,
			}
		}
	}
	return out
}

// CeilingsOf is e's ceilings; for an entry written before they were kept,
// its headline as its headline batch's only ceiling.
func (e HistoryEntry) CeilingsOf() []HistoryCeiling {
	if e.Ceilings != nil {
		return e.Ceilings
	}
	return []HistoryCeiling{{
		Batch: e.Batch, Found: true, ThroughputPerS: e.ThroughputPerS, Connections: e.Connections,
		P99Ns: e.P99Ns, Verdict: e.Verdict, LowerBound: e.LowerBound,
	}}
}

// ParseHistory reads a history file strictly: a line that is not an
// entry is an error naming its line number. Readers that must go on past
// a damaged line use ReadHistory.
func ParseHistory(data []byte, name string) ([]HistoryEntry, error) {
	f, err := ReadHistory(data, name)
	if err != nil {
		return nil, err
	}
	if len(f.Bad) > 0 {
		return nil, f.Bad[0]
	}
	return f.Entries, nil
}

// HistoryFile is a history file as read: its entries, and the lines that
// are not entries (a corrupt or truncated line), each kept verbatim.
type HistoryFile struct {
	Entries []HistoryEntry
	Bad     []BadLine
}

// BadLine is a line of a history file that is not an entry. It is
// reported and skipped, never fatal, and a publish keeps it as it is
// (the results branch is append-only: nothing in it is rewritten).
type BadLine struct {
	Name string
	Line int    // 1-based
	Raw  []byte // the line as it is in the file
	Err  error
	// After is the index in Entries of the entry before it (-1: none).
	After int
}

func (b BadLine) Error() string { return fmt.Sprintf("%s:%d: %v", b.Name, b.Line, b.Err) }

// ReadHistory reads a history file. Blank lines are skipped; a line that
// is not an entry goes to Bad. The error is the file's own (a line over
// 1 MiB), not a line's.
func ReadHistory(data []byte, name string) (HistoryFile, error) {
	var f HistoryFile
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e HistoryEntry
		err := json.Unmarshal(line, &e)
		if err == nil && e.GitRef == "" {
			err = errors.New("git_ref: missing")
		}
		if err != nil {
			f.Bad = append(f.Bad, BadLine{Name: name, Line: n, Raw: bytes.Clone(line), Err: err, After: len(f.Entries) - 1})
			continue
		}
		f.Entries = append(f.Entries, e)
	}
	if err := sc.Err(); err != nil {
		return HistoryFile{}, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// Format writes entries (the file's after an append) as JSON Lines with
// the file's bad lines kept verbatim, each after the entry it followed,
// or the nearest older one still there (at the start when none is).
func (f HistoryFile) Format(entries []HistoryEntry) []byte {
	if len(f.Bad) == 0 {
		return FormatHistory(entries)
	}
	type key struct {
		ref, gen string
		at       time.Time
	}
	keyOf := func(e HistoryEntry) key { return key{e.GitRef, e.Generator, e.FinishedAt} }
	pos := map[key]int{}
	for i, e := range entries {
		pos[keyOf(e)] = i
	}
	after := map[int][][]byte{} // index in entries (-1: the start) -> bad lines
	for _, b := range f.Bad {
		at := -1
		for i := b.After; i >= 0; i-- {
			if j, ok := pos[keyOf(f.Entries[i])]; ok {
				at = j
				break
			}
		}
		after[at] = append(after[at], b.Raw)
	}
	var out bytes.Buffer
	for _, raw := range after[-1] {
		out.Write(raw)
		out.WriteByte('\n')
	}
	for i, e := range entries {
		out.Write(FormatHistory([]HistoryEntry{e}))
		for _, raw := range after[i] {
			out.Write(raw)
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
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

// Series is what an entry is a point of: one trend per generator,
// scenario and kind. A two-arm run's figure is its head arm's, measured
// against a base on the same runner, not a sweep's own ceiling: another
// series, never an entry that replaces a sweep's (issue 22). Entries
// written before the scenario was recorded were echo's. The server
// (Target) is not part of it: a new server on the same series is a
// regime change (Trend), drawn as one.
func (e HistoryEntry) Series() string {
	scenario := e.Scenario
	if scenario == "" {
		scenario = "echo"
	}
	s := e.Generator + " · " + scenario
	if e.Comparison != "" {
		s += " · two-arm (head)"
	}
	return s
}

// MergeHistory adds entries to h (oldest first) for a site: an entry of
// the same series and commit as one in h replaces it where it stands;
// the others go in by their finish time, after every entry of h that
// finished no later. The order of h is the data branch's, and no order
// of the arguments changes it (the trend once ran backwards because the
// newest result came first).
func MergeHistory(h []HistoryEntry, entries []HistoryEntry) []HistoryEntry {
	out := slices.Clone(h)
	var extra []HistoryEntry
	for _, e := range entries {
		i := slices.IndexFunc(out, func(o HistoryEntry) bool { return o.GitRef == e.GitRef && o.Series() == e.Series() })
		if i >= 0 {
			out[i] = e
			continue
		}
		if j := slices.IndexFunc(extra, func(o HistoryEntry) bool { return o.GitRef == e.GitRef && o.Series() == e.Series() }); j >= 0 {
			extra[j] = e
			continue
		}
		extra = append(extra, e)
	}
	slices.SortStableFunc(extra, func(a, b HistoryEntry) int { return a.FinishedAt.Compare(b.FinishedAt) })
	for _, e := range extra {
		at := len(out)
		for at > 0 && out[at-1].FinishedAt.After(e.FinishedAt) {
			at--
		}
		out = slices.Insert(out, at, e)
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
