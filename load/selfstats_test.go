package load

import (
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestLoadThreads(t *testing.T) {
	const window = int64(10 * time.Second)
	ms := func(v int64) int64 { return v * int64(time.Millisecond) }
	at := func(run, delay int64) threadSched { return threadSched{runNs: ms(run), delayNs: ms(delay)} }
	tests := []struct {
		name string
		a, b map[int]threadSched
		skip int
		want *ThreadStats
	}{
		{"no schedstat", nil, map[int]threadSched{1: at(1, 1)}, 0, nil},
		{
			// sysmon-like threads ran little and waited most of that: left
			// out, so they cannot swamp the one that carried the load.
			name: "only the threads that ran a tenth of the window",
			a:    map[int]threadSched{1: at(0, 0), 2: at(100, 100), 3: at(0, 0), 4: at(50, 0)},
			b:    map[int]threadSched{1: at(9400, 140), 2: at(200, 400), 3: at(1000, 1000), 4: at(1049, 0)},
			want: &ThreadStats{Threads: 2, RunNs: ms(10400), RunDelayNs: ms(1140), RunDelayFraction: 1140.0 / 11540, MaxThreadFraction: 0.5},
		},
		{
			name: "threads born or ended in the window, or whose id was reused, are left out",
			a:    map[int]threadSched{1: at(0, 0), 2: at(0, 0), 5: at(5000, 5000)},
			b:    map[int]threadSched{1: at(3000, 1000), 3: at(9000, 9000), 5: at(2000, 0)},
			want: &ThreadStats{Threads: 1, RunNs: ms(3000), RunDelayNs: ms(1000), RunDelayFraction: 0.25, MaxThreadFraction: 0.25},
		},
		{
			// Starved below the share: the busiest thread stands for the
			// load, so starvation is seen, not filtered out.
			name: "starved: the busiest thread",
			a:    map[int]threadSched{1: at(0, 0), 2: at(0, 0)},
			b:    map[int]threadSched{1: at(500, 9000), 2: at(20, 30)},
			want: &ThreadStats{Threads: 1, RunNs: ms(500), RunDelayNs: ms(9000), RunDelayFraction: 9000.0 / 9500, MaxThreadFraction: 9000.0 / 9500},
		},
		{
			name: "sysmon is not a load thread, however much it ran",
			a:    map[int]threadSched{1: at(0, 0), 2: at(0, 0)},
			b:    map[int]threadSched{1: at(9000, 100), 2: at(1400, 3000)},
			skip: 2,
			want: &ThreadStats{Threads: 1, RunNs: ms(9000), RunDelayNs: ms(100), RunDelayFraction: 100.0 / 9100, MaxThreadFraction: 100.0 / 9100},
		},
		{"nothing ran", map[int]threadSched{1: at(0, 0)}, map[int]threadSched{1: at(0, 0)}, 0, &ThreadStats{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if d := cmp.Diff(tt.want, loadThreads(tt.a, tt.b, window, tt.skip)); d != "" {
				t.Errorf("loadThreads (-want +got):\n%s", d)
			}
		})
	}
}

// TestReadThreadsSeesTheBusyThread reads this process's threads around a
// quarter of a second of spinning on the test's own thread (locked to it,
// so it exists at both edges): it must be a load thread, with that time.
// Bounded: the spin ends by the clock.
func TestReadThreadsSeesTheBusyThread(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("schedstat is Linux's")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	a := readThreads()
	if a == nil {
		t.Skip("no /proc/self/task/*/schedstat on this kernel")
	}
	if tid := sysmonTID(); tid == 0 || tid == os.Getpid() {
		t.Errorf("sysmon thread id %d (pid %d)", tid, os.Getpid())
	}
	start := time.Now()
	for time.Since(start) < 250*time.Millisecond {
	}
	b := readThreads()
	lt := loadThreads(a, b, int64(time.Since(start)), sysmonTID())
	if lt == nil || lt.Threads < 1 {
		t.Fatalf("load threads %+v: the spinning thread was not found", lt)
	}
	// It ran or waited to run for the spin (wall time), whatever else
	// the machine was doing; a sleeping thread would show next to
	// nothing. Half leaves room for the runtime's preemption of a locked
	// thread, which sleeps until the scheduler hands its goroutine back.
	if got := time.Duration(lt.RunNs + lt.RunDelayNs); got < 125*time.Millisecond {
		t.Errorf("load threads ran %v and waited %v over a 250ms spin", time.Duration(lt.RunNs), time.Duration(lt.RunDelayNs))
	}
}
