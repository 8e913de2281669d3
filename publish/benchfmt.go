package publish

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"

	"github.com/ceiling-bench/ceiling/result"
)

// BenchPkg is the pkg: line of the benchmark format: benchstat shows it
// above each table.
const BenchPkg = "github.com/ceiling-bench/ceiling"

// Units of the benchmark format. p99-ns reads in benchstat as p99-sec
// (it rescales ns); both carry their direction in a Unit line.
const (
	UnitThroughput = "msg/s"
	UnitP99        = "p99-ns"
)

// WriteBenchfmt writes r in the Go benchmark format
// (golang.org/x/perf/benchfmt), the one `benchstat old.txt new.txt` reads:
// one line per measured point and repeat, so that the repeats of a point
// (the sweep's own, the A-A repeat of the headline point, a two-arm
// sweep's compare repeats) are the samples benchstat summarises.
//
//	BenchmarkCeiling/scenario=echo/batch=10/conns=64 1 134020 msg/s 812000 p99-ns
//
// A two-arm sweep's points carry their arm as a name key (/arm=base,
// /arm=head), so `benchstat -col /arm` compares the arms of one run.
//
// Only keys that describe the machine and the regime are config lines
// (goos, goarch, cpu, pkg, regime): benchstat splits tables by config, so
// two runs of one regime compare, and runs of different regimes do not.
// The run's identity (file, commit, generator) is in comment lines, which
// benchstat ignores. Failed points are not numbers: they are comment lines
// saying what failed; a headroom probe (the generator held to a quota) is
// not a sample of the point either and is left out with a comment. name
// labels the run (its file).
func WriteBenchfmt(w io.Writer, r *result.Result, name string) error {
	bw := bufio.NewWriter(w)
	comment := func(format string, args ...any) {
		fmt.Fprintf(bw, "# %s\n", benchLine(fmt.Sprintf(format, args...)))
	}
	comment("ceiling sweep result %s", name)
	comment("commit %s, generator %s, finished %s", r.Meta.GitRef, r.Meta.Generator, r.Meta.FinishedAt.UTC().Format("2006-01-02T15:04:05Z"))
	if r.Partial {
		comment("partial: the sweep was interrupted (%s)", r.PartialReason)
	}
	if r.Config.Objective != "" {
		comment("objective: %s", r.Config.Objective)
	}
	if r.NoiseFloorPct != nil {
		comment("A-A noise floor %.1f%%", *r.NoiseFloorPct)
	}
	hw := r.Meta.Hardware
	config := func(key, value string) {
		value = benchLine(value)
		if value == "" {
			value = "unknown"
		}
		fmt.Fprintf(bw, "%s: %s\n", key, value)
	}
	config("goos", hw.OS)
	config("goarch", hw.Arch)
	config("cpu", hw.CPUModel)
	config("pkg", BenchPkg)
	config("regime", r.Regime)
	fmt.Fprintf(bw, "Unit %s better=higher\n", UnitThroughput)
	fmt.Fprintf(bw, "Unit %s better=lower\n", UnitP99)
	scenario := benchKey(r.Config.Scenario)
	for _, p := range r.Curve {
		bench := fmt.Sprintf("BenchmarkCeiling/scenario=%s/batch=%d/conns=%d", scenario, p.Batch, p.Connections)
		if p.Arm != "" {
			bench += "/arm=" + benchKey(p.Arm)
		}
		where := fmt.Sprintf("point %d (%s, rep %d)", p.Index, p.Role, p.Rep)
		switch {
		case p.Status != "ok":
			reason := p.FailReason
			if reason == "" {
				reason = p.Status
			}
			comment("%s %s failed, not a number: %s", bench, where, reason)
			continue
		case p.Role != result.RoleSweep && p.Role != result.RoleAARepeat && p.Role != result.RoleCompare:
			comment("%s %s left out: a %s is not a sample of the point", bench, where, p.Role)
			continue
		case p.LowerBound:
			comment("%s %s is a lower bound (%s): the server may do more", bench, where, p.Verdict)
		case !p.Clean:
			comment("%s %s is not clean (%s)", bench, where, p.VerdictReason)
		}
		fmt.Fprintf(bw, "%s 1 %s %s", bench, strconv.FormatFloat(p.ThroughputPerS, 'f', -1, 64), UnitThroughput)
		if p.LatencyNs.P99 > 0 {
			fmt.Fprintf(bw, " %d %s", p.LatencyNs.P99, UnitP99)
		}
		bw.WriteByte('\n')
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// benchKey keeps a name key's value one token of the benchmark name: no
// space (it would end the name), no '/' or '=' (they would start a new
// key), nothing outside [A-Za-z0-9._-].
func benchKey(s string) string {
	s = strings.Map(func(r rune) rune {
		if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-' || r == '_') {
			return r
		}
		return '_'
	}, s)
	if s == "" {
		return "unknown"
	}
	return s
}

// benchLine keeps a string from a document on one line of the benchmark
// file: control characters become spaces, runs of space one space.
func benchLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
