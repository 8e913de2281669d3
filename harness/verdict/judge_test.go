package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/load"
	"github.com/ceiling-bench/ceiling/result"
)

func cpuFrac(f float64, pinned int) result.CPUStats {
	return result.CPUStats{Samples: 8, MeanCores: f * float64(pinned), PinnedCores: pinned, FractionMean: f}
}

type judgeCase struct {
	name        string
	srv, gen    result.CPUStats
	sum         load.Summary
	self        load.GeneratorStats
	want        string
	wantInWhy   string
	wantLowerBd bool
}

func TestJudge(t *testing.T) {
	window := int64(10 * time.Second)
	closed := load.Summary{Mode: "closed", MeasuredNs: window}
	rate := func(req, got float64, saturated bool) load.Summary {
		return load.Summary{Mode: "open", RequestedOpsPerS: &req, AchievedOpsPerS: got, Saturated: saturated, MeasuredNs: window}
	}
	attempted := func(req, sent, ok float64) load.Summary {
		s := rate(req, ok, false)
		s.AttemptedOpsPerS = sent
		return s
	}
	threads := func(frac float64) *load.ThreadStats {
		run := int64(9 * time.Second)
		delay := int64(float64(run) * frac / (1 - frac))
		return &load.ThreadStats{Threads: 1, RunNs: run, RunDelayNs: delay, RunDelayFraction: frac, MaxThreadFraction: frac}
	}
	// os_run_delay_ns is no longer read: 40% of the window here, as the
	// all-thread sum read on nearly every point, changes nothing.
	keptUp := load.GeneratorStats{RunnableP99Ns: int64(50 * time.Microsecond), OSRunDelayNs: int64(4 * time.Second), LoadThreads: threads(0.02)}
	waited := load.GeneratorStats{RunnableP99Ns: int64(5 * time.Millisecond), OSRunDelayNs: int64(100 * time.Millisecond), LoadThreads: threads(0.02)}
	ranLate := load.GeneratorStats{RunnableP99Ns: int64(50 * time.Microsecond), LoadThreads: threads(0.20)}
	loops := func(busy float64, lag time.Duration) load.GeneratorStats {
		return load.GeneratorStats{Engine: "loop", RunnableP99Ns: int64(20 * time.Microsecond), LoadThreads: threads(0.01),
			Loops: &load.LoopStats{Count: 1, BusyFraction: []float64{busy}, MaxBusy: busy, LagP99Ns: int64(lag), LagMaxNs: int64(2 * lag)}}
	}

	tests := []judgeCase{
		{"server at its cores", cpuFrac(0.97, 3), cpuFrac(0.6, 1), closed, keptUp, result.VerdictServerSaturated, "server 97% of 3 cores", false},
		{"server just under the line", cpuFrac(0.89, 3), cpuFrac(0.6, 1), closed, keptUp, result.VerdictNeither, "latency- or connection-bound", false},
		{"busy generator that kept up is not capped", cpuFrac(0.5, 1), cpuFrac(0.99, 1), closed, keptUp, result.VerdictNeither, "eager reads, not a cap", false},
		{"busy generator with runnable backlog", cpuFrac(0.5, 1), cpuFrac(0.99, 1), closed, waited, result.VerdictGeneratorCapped, "work ready but not run", true},
		{"busy generator whose threads waited for a cpu", cpuFrac(0.5, 1), cpuFrac(0.95, 1), closed, ranLate, result.VerdictGeneratorCapped, "load threads waited 20.0% of their runnable time", true},
		{"load threads that waited on a core not busy: a blip", cpuFrac(0.5, 1), cpuFrac(0.5, 1), closed, ranLate, result.VerdictNeither, "kept up", false},
		{"eager reader at 90% of its core, its threads not waiting", cpuFrac(0.97, 1), cpuFrac(0.90, 1), closed, keptUp, result.VerdictServerSaturated, "load threads waited 2.0%", false},
		{"only the old all-thread run delay: judged by cpu", cpuFrac(0.5, 1), cpuFrac(0.9, 1), closed, load.GeneratorStats{OSRunDelayNs: int64(5 * time.Second)}, result.VerdictGeneratorCapped, "no self-evidence reported", true},
		{"event loop that never waits is saturated", cpuFrac(0.5, 1), cpuFrac(0.7, 1), closed, loops(0.99, 100*time.Microsecond), result.VerdictGeneratorCapped, "event loop saturated (busiest event loop 99%", true},
		{"event loop lagging", cpuFrac(0.5, 1), cpuFrac(0.6, 1), closed, loops(0.7, 30*time.Millisecond), result.VerdictGeneratorCapped, "loop lag p99 30ms", true},
		{"event loop busy 90% and prompt kept up", cpuFrac(0.97, 1), cpuFrac(0.9, 1), closed, loops(0.9, time.Millisecond), result.VerdictServerSaturated, "eager reads, not a cap", false},
		{"event loop and server both at their cores", cpuFrac(0.95, 1), cpuFrac(0.99, 1), closed, loops(0.995, time.Millisecond), result.VerdictBoth, "event loop saturated", true},
		{"loops alone are evidence", cpuFrac(0.5, 1), cpuFrac(0.9, 1), closed, load.GeneratorStats{Loops: &load.LoopStats{Count: 2, BusyFraction: []float64{0.5, 0.6}, MaxBusy: 0.6}}, result.VerdictNeither, "eager reads, not a cap", false},
		{"backlog on an idle generator is a blip", cpuFrac(0.5, 1), cpuFrac(0.3, 1), closed, waited, result.VerdictNeither, "kept up", false},
		{"both", cpuFrac(0.95, 1), cpuFrac(0.95, 1), closed, waited, result.VerdictBoth, "lower bound", true},
		{"no self-evidence, busy: conservative cap", cpuFrac(0.5, 1), cpuFrac(0.9, 1), closed, load.GeneratorStats{}, result.VerdictGeneratorCapped, "conservative", true},
		{"no self-evidence, idle", cpuFrac(0.5, 1), cpuFrac(0.5, 1), closed, load.GeneratorStats{}, result.VerdictNeither, "no self-evidence", false},
		{"errors named", cpuFrac(0.2, 1), cpuFrac(0.2, 1), load.Summary{Mode: "closed", MeasuredNs: window, Errors: 7}, keptUp, result.VerdictNeither, "7 errors", false},
		{"open loop on schedule", cpuFrac(0.5, 1), cpuFrac(0.99, 1), rate(1000, 999, false), load.GeneratorStats{ScheduleLagP99: int64(time.Millisecond)}, result.VerdictNeither, "on schedule", false},
		{"open loop lagging", cpuFrac(0.5, 1), cpuFrac(0.5, 1), rate(1000, 990, false), load.GeneratorStats{ScheduleLagP99: int64(50 * time.Millisecond)}, result.VerdictGeneratorCapped, "schedule lag p99 50ms", true},
		{"open loop late sends", cpuFrac(0.5, 1), cpuFrac(0.5, 1), rate(1000, 990, false), load.GeneratorStats{LateSendsFrac: 0.2}, result.VerdictGeneratorCapped, "20.0% of sends late", true},
		// A generator without attempted_ops_per_s is judged on achieved.
		{"open loop short without backpressure", cpuFrac(0.5, 1), cpuFrac(0.5, 1), rate(1000, 800, false), load.GeneratorStats{}, result.VerdictGeneratorCapped, "attempted 800 of 1000", true},
		{"open loop sent short", cpuFrac(0.5, 1), cpuFrac(0.5, 1), attempted(1000, 800, 800), load.GeneratorStats{}, result.VerdictGeneratorCapped, "attempted 800 of 1000", true},
		// Issue 8 item 10: sent at the rate, most requests failed: the
		// server's failure, not a generator that fell behind.
		{"open loop sent on schedule, server failing", cpuFrac(0.5, 1), cpuFrac(0.5, 1), attempted(1000, 1000, 390), load.GeneratorStats{}, result.VerdictNeither, "on schedule", false},
		{"open loop short at max in-flight is the server", cpuFrac(0.95, 1), cpuFrac(0.5, 1), rate(1000, 800, true), load.GeneratorStats{}, result.VerdictServerSaturated, "server 95%", false},
	}
	shared := func(own, busy float64) result.CPUStats { c := cpuFrac(own, 1); c.PinnedBusy = busy; return c }
	tests = append(tests, []judgeCase{
		{"generator starved by other work on its cpu", cpuFrac(0.3, 1), shared(0.26, 0.99), closed, ranLate, result.VerdictGeneratorCapped, "work ready but not run", true},
		{"server cpus full of other work", shared(0.47, 0.98), cpuFrac(0.4, 1), closed, keptUp, result.VerdictNeither, "machine was not quiet", false},
		{"server stuck near one of three cores", result.CPUStats{Samples: 8, MeanCores: 1.05, PinnedCores: 3, FractionMean: 0.35}, cpuFrac(0.4, 1), closed, keptUp, result.VerdictNeither, "may not scale across them", false},
		{"server on three cores, two full of other work: contention, not scaling", result.CPUStats{Samples: 8, MeanCores: 1.0, PinnedCores: 3, FractionMean: 0.33, PinnedBusy: 0.95}, cpuFrac(0.4, 1), closed, keptUp, result.VerdictNeither, "machine was not quiet", false},
		{"unsampled sides are not 0%", result.CPUStats{PinnedCores: 3, PinnedBusy: -1}, result.CPUStats{PinnedCores: 1, PinnedBusy: -1}, closed, load.GeneratorStats{}, result.VerdictNeither, "server CPU not sampled, generator CPU not sampled; no self-evidence reported and generator CPU not sampled: cannot tell", false},
		{"softirq margin is not sharing", shared(0.80, 0.90), cpuFrac(0.4, 1), closed, keptUp, result.VerdictNeither, "latency- or connection-bound", false},
	}...)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := Judge(DefaultThresholds, tt.srv, tt.gen, tt.sum, tt.self)
			if got != tt.want {
				t.Errorf("verdict = %q (%s), want %q", got, why, tt.want)
			}
			if !strings.Contains(why, tt.wantInWhy) {
				t.Errorf("reason %q does not say %q", why, tt.wantInWhy)
			}
			if result.IsLowerBound(got) != tt.wantLowerBd {
				t.Errorf("lower bound = %v, want %v", result.IsLowerBound(got), tt.wantLowerBd)
			}
		})
	}
}
