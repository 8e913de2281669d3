package pinning

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// helperEnv makes the test binary, exec'ed through the trampoline, act as a
// small program instead of running the tests.
const helperEnv = "PINNING_TEST_HELPER"

// beforeInit, when a test file sets it, runs first thing in TestMain, in
// every child this binary is exec'ed as too, before Init.
var beforeInit func()

func TestMain(m *testing.M) {
	if beforeInit != nil {
		beforeInit()
	}
	Init()
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

func helper(mode string) int {
	switch mode {
	case "threads":
		// Start threads after exec, then report every thread's mask.
		var wg sync.WaitGroup
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runtime.LockOSThread() // a fresh thread: this goroutine's exit ends it after the report below
				if _, err := os.ReadFile("/proc/thread-self/status"); err != nil {
					fmt.Println("error", err)
				}
			}()
		}
		tasks, _ := filepath.Glob("/proc/self/task/*/status")
		for _, st := range tasks {
			b, err := os.ReadFile(st)
			if err != nil {
				continue // the thread ended meanwhile
			}
			fmt.Printf("task %s %s\n", filepath.Base(filepath.Dir(st)), statusField(string(b), "Cpus_allowed_list"))
		}
		wg.Wait()
		fmt.Printf("gomaxprocs %d\n", runtime.GOMAXPROCS(0))
		_, marker := os.LookupEnv(envSpec)
		fmt.Printf("marker %v\n", marker)
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 3
}

func statusField(status, key string) string {
	for _, line := range strings.Split(status, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
