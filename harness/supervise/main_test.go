package supervise

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/pinning"
)

// helperEnv makes the test binary act as a small program instead of
// running the tests: "serve ADDR" (an HTTP server) or "intermediate LOG"
// (starts a grandchild through this package and waits).
const helperEnv = "SUPERVISE_TEST_HELPER"

func TestMain(m *testing.M) {
	pinning.Init()
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func helper(mode string, args []string) int {
	switch mode {
	case "serve":
		mux := http.NewServeMux()
		mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
		mux.HandleFunc("/notready", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "warming up", http.StatusServiceUnavailable)
		})
		fmt.Println("serving on", args[0])
		// Exits only when killed; the test stops it.
		fmt.Fprintln(os.Stderr, http.ListenAndServe(args[0], mux))
		return 1
	case "intermediate":
		p, err := Start(context.Background(), Spec{Name: "grandchild", Path: "/bin/sleep", Args: []string{"60"}, LogPath: args[0]})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(strconv.Itoa(p.Pid()))
		time.Sleep(time.Minute) // until the test SIGKILLs us
		return 0
	case "harness":
		// A harness that will be SIGKILLed: it boots args[1] (a shell
		// script) supervised, in a headroom-style throttle cgroup when
		// args[2] is "throttle" and it may, and says "RUNID SUPERVISORPID
		// THROTTLE".
		var cg string
		if len(args) > 2 && args[2] == "throttle" {
			if th, err := pinning.NewThrottle(CgroupName("headroom", 1), 0.5); err == nil {
				cg = th.Path
			}
		}
		p, err := Start(context.Background(), Spec{Name: "server", Path: "/bin/sh", Args: []string{"-c", args[1]}, LogPath: args[0], Cgroup: cg})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(RunID(), p.Pid(), cg)
		time.Sleep(time.Minute) // until the test SIGKILLs us
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 3
}
