package meter

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ceiling-bench/ceiling/harness/cpusample"
	"github.com/ceiling-bench/ceiling/pinning"
	"github.com/ceiling-bench/ceiling/result"
	"github.com/google/go-cmp/cmp"
)

var updateWindows = flag.Bool("update-windows", false, "rewrite testdata/windows/*.golden.json from the recorded windows")

// recordedWindow is one window a real Meter saw (testdata/windows), with
// the point's pinned sets.
type recordedWindow struct {
	ServerCPUs    []int  `json:"server_cpus"`
	GeneratorCPUs []int  `json:"generator_cpus"`
	Window        Window `json:"window"`
}

// sidesOfWindow is what Sides made of a window, as the golden file
// holds it, with the contention rule's reading of it.
type sidesOfWindow struct {
	Server     result.CPUStats `json:"server"`
	Generator  result.CPUStats `json:"generator"`
	Contended  bool            `json:"contended"`
	Contention string          `json:"contention,omitempty"`
}

// The CPU of each side, and whether the point was contended, from
// windows a real Meter recorded on this 2-core machine: quiet ones, one
// with a busy loop on the server's CPU, one on the generator's. The
// golden files hold what Sides made of them; the assertions hold the
// rule, so a golden file rewritten to a wrong answer still fails.
// Recorded on 2026-12-03 from `ceiling sweep` (batch 10, 8 and 32
// connections, server on CPU 1, generator on CPU 0) with the real Meter's
// Window written out as JSON: one point clean, one that a `go build`
// beside it contended, and one each with `taskset -c N` busy loop on a
// side's CPU.
func TestSidesOfRecordedWindows(t *testing.T) {
	files, err := filepath.Glob("testdata/windows/*.window.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded windows (%v)", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".window.json")
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var rw recordedWindow
			if err := json.Unmarshal(b, &rw); err != nil {
				t.Fatal(err)
			}
			srvSet, genSet := pinning.CPUSet(rw.ServerCPUs), pinning.CPUSet(rw.GeneratorCPUs)
			srv, gen, _ := Sides(rw.Window, srvSet, genSet, false)
			got := sidesOfWindow{Server: srv, Generator: gen, Contended: result.Shared(srv) || result.Shared(gen), Contention: result.Contention(srv, gen)}

			// The rules, whatever the golden file says.
			if gen.PinnedCores != len(genSet) || srv.PinnedCores != len(srvSet) {
				t.Errorf("pinned cores %d/%d, want the sets' %d/%d", srv.PinnedCores, gen.PinnedCores, len(srvSet), len(genSet))
			}
			for side, c := range map[string]result.CPUStats{"server": srv, "generator": gen} {
				if c.PinnedBusy != -1 && (c.PinnedBusy < 0 || c.PinnedBusy > 1) {
					t.Errorf("%s busy %v: a fraction, or -1 when unknown", side, c.PinnedBusy)
				}
				if c.Attribution == nil {
					t.Errorf("%s: no attribution from a window with %d scans", side, rw.Window.Who.Scans)
				}
			}
			switch {
			case strings.HasPrefix(name, "quiet"):
				if got.Contended {
					t.Errorf("a quiet window read as contended: %s", got.Contention)
				}
			case strings.HasPrefix(name, "hog-server"):
				if !result.Shared(srv) || !strings.Contains(got.Contention, "server CPUs") {
					t.Errorf("a busy loop on the server's CPU not seen: %q", got.Contention)
				}
			case strings.HasPrefix(name, "hog-generator"):
				if !result.Shared(gen) || !strings.Contains(got.Contention, "generator CPUs") {
					t.Errorf("a busy loop on the generator's CPU not seen: %q", got.Contention)
				}
			default:
				t.Fatalf("%s: name it quiet-*, hog-server-* or hog-generator-*", f)
			}

			golden := strings.TrimSuffix(f, ".window.json") + ".golden.json"
			if *updateWindows {
				b, _ := json.MarshalIndent(got, "", "  ")
				if err := os.WriteFile(golden, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			b, err = os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./harness/meter -run TestSidesOfRecordedWindows -update-windows)", err)
			}
			var want sidesOfWindow
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("sides (-golden +got):\n%s", diff)
			}
		})
	}
}

// An external server's window samples no server: the server's CPU is
// left for its metrics, and only the generator's is made.
func TestSidesExternal(t *testing.T) {
	w := Window{External: true, Generator: cpuSampleOf(0.5),
		GeneratorCores: CoreWindow{Start: CoreSnap{Busy: 10, Total: 100}, End: CoreSnap{Busy: 60, Total: 200}, StartOK: true, EndOK: true}}
	srv, gen, parts := Sides(w, nil, pinning.CPUSet{0}, false)
	if srv != (result.CPUStats{}) || parts != nil {
		t.Errorf("server %+v, parts %v: want nothing made for an external server", srv, parts)
	}
	if gen.MeanCores != 0.5 || gen.PinnedBusy != 0.5 || gen.Attribution != nil {
		t.Errorf("generator %+v: want 0.5 cores, busy 0.5, no attribution (the scan failed)", gen)
	}
}

// Several servers: each one's share carries the set's busy, steal and
// attribution; a read of the cores that failed is unknown (-1), never a
// figure.
func TestSidesEachServer(t *testing.T) {
	w := Window{Server: cpuSampleOf(0.9), Servers: []cpusample.Stats{cpuSampleOf(0.5), cpuSampleOf(0.4)}, Generator: cpuSampleOf(0.3),
		ServerCores: CoreWindow{Start: CoreSnap{Busy: 0, Total: 100}, End: CoreSnap{Busy: 90, Total: 200}, StartOK: true, EndOK: true},
		// The generator's cores: the end read failed.
		GeneratorCores: CoreWindow{Start: CoreSnap{Busy: 0, Total: 100}, StartOK: true}}
	srv, gen, parts := Sides(w, pinning.CPUSet{1}, pinning.CPUSet{0}, true)
	if len(parts) != 2 || parts[0].MeanCores != 0.5 || parts[1].MeanCores != 0.4 || parts[1].PinnedBusy != srv.PinnedBusy || srv.PinnedBusy != 0.9 {
		t.Errorf("parts %+v of server %+v", parts, srv)
	}
	if gen.PinnedBusy != -1 || gen.StealFraction != -1 {
		t.Errorf("generator busy %v, steal %v: want -1, unknown", gen.PinnedBusy, gen.StealFraction)
	}
}

// cpuSampleOf is a tree that used cores over a 1 s window.
func cpuSampleOf(cores float64) cpusample.Stats {
	return cpusample.Stats{Samples: 10, MeanCores: cores, P95Cores: cores, WallSeconds: 1, Processes: 1}
}
