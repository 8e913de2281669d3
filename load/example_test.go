package load_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/ceiling-bench/ceiling/load"
)

// Run one closed-loop echo point and print the report; the same Config is
// what `ceiling load` fills from its flags.
func ExampleRun() {
	cfg := load.DefaultConfig()
	cfg.URL = "ws://127.0.0.1:6001/echo"
	cfg.Connections, cfg.Batch = 16, 10
	cfg.DurationNs, cfg.WarmupNs = int64(5*time.Second), int64(time.Second)
	res, err := load.Run(context.Background(), cfg, load.Options{Version: "dev", Progress: os.Stderr})
	if res != nil {
		load.WriteReport(os.Stdout, res)
	}
	if err != nil {
		fmt.Println("error:", err)
	}
}
