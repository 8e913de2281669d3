package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ceiling-bench/ceiling/refserver"
	"github.com/google/go-cmp/cmp"
)

// The test binary doubles as refserver when this variable is set, so the
// signal path is tested on a real process.
const beMain = "REFSERVER_TEST_BE_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(beMain) == "1" {
		os.Args = append([]string{"refserver"}, strings.Fields(os.Getenv("REFSERVER_TEST_ARGS"))...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestFlags(t *testing.T) {
	o, err := parseFlags([]string{"--addr", "127.0.0.1:0", "--app-id", "7", "--key", "k", "--secret", "s",
		"--max-message-bytes", "64KiB", "--max-batch", "10", "--max-body-bytes", "1MiB", "--send-queue", "50",
		"--max-inflight-body-bytes", "8MiB", "--max-subscriptions", "7",
		"--write-timeout", "3s", "--activity-timeout", "30s", "--shutdown-timeout", "2s", "--spin", "5us",
		"--rooms-editor-cap", "3", "--rooms-ring", "20", "--rooms-skip-every", "5", "--rooms-presence-beat", "10ms",
		"--rooms-rate-limit", "7", "--rooms-send-queue", "21", "--ready-delay", "2s", "--stop-delay", "4s", "--conn-ballast", "4KiB", "--garbage", "1KiB"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	want := options{
		cfg: refserver.Config{Addr: "127.0.0.1:0", AppID: "7", Key: "k", Secret: "s", MaxMessageBytes: 65536,
			MaxBatch: 10, MaxBodyBytes: 1 << 20, SendQueue: 50,
			MaxInflightBodyBytes: 8 << 20, MaxSubscriptions: 7, WriteTimeout: 3 * time.Second, ActivityTimeout: 30 * time.Second,
			Spin: 5 * time.Microsecond, RoomsEditorCap: 3, RoomsRing: 20, RoomsSkipEvery: 5,
			RoomsPresenceBeat: 10 * time.Millisecond, RoomsRateLimit: 7, RoomsSendQueue: 21, ConnBallast: 4096, Garbage: 1024},
		shutdownTimeout: 2 * time.Second, readyDelay: 2 * time.Second, stopDelay: 4 * time.Second,
	}
	if diff := cmp.Diff(want, o, cmp.AllowUnexported(options{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBadFlagsNameTheFlag(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "-bogus"},
		{[]string{"--addr", "6001"}, "-addr"},
		{[]string{"--addr", "127.0.0.1:http"}, "-addr"},
		{[]string{"--max-message-bytes", "0"}, "-max-message-bytes"},
		{[]string{"--max-message-bytes", "12XB"}, "-max-message-bytes"},
		{[]string{"--max-batch", "-1"}, "-max-batch"},
		{[]string{"--send-queue", "many"}, "-send-queue"},
		{[]string{"--write-timeout", "0s"}, "-write-timeout"},
		{[]string{"--activity-timeout", "500ms"}, "--activity-timeout"},
		{[]string{"--spin", "-1ms"}, "-spin"},
		{[]string{"--spin", "lots"}, "-spin"},
		{[]string{"--conn-ballast", "0"}, "-conn-ballast"},
		{[]string{"--conn-ballast", "lots"}, "-conn-ballast"},
		{[]string{"--key", ""}, "--key"},
		{[]string{"--send-queue", "10"}, "--send-queue: 10 is less than --max-batch 1000"},
		{[]string{"--max-subscriptions", "0"}, "-max-subscriptions"},
		{[]string{"--max-inflight-body-bytes", "0"}, "-max-inflight-body-bytes"},
		{[]string{"--max-body-bytes", "4MiB", "--max-inflight-body-bytes", "6MiB"}, "--max-inflight-body-bytes: 6291456 is less than twice --max-body-bytes"},
		{[]string{"--rooms-editor-cap", "0"}, "-rooms-editor-cap"},
		{[]string{"--rooms-ring", "-5"}, "-rooms-ring"},
		{[]string{"--rooms-skip-every", "-1"}, "-rooms-skip-every"},
		{[]string{"--rooms-skip-every", "often"}, "-rooms-skip-every"},
		{[]string{"--rooms-presence-beat", "0s"}, "-rooms-presence-beat"},
		{[]string{"--rooms-rate-limit", "0"}, "-rooms-rate-limit"},
		{[]string{"--rooms-send-queue", "0"}, "-rooms-send-queue"},
		{[]string{"--rooms-ring", "100", "--rooms-send-queue", "100"}, "--rooms-send-queue: 100 is not more than --rooms-ring 100"},
		{[]string{"--cluster", "http://127.0.0.1:4222"}, `--cluster: "http://127.0.0.1:4222" is not a nats://HOST:PORT URL`},
		{[]string{"--cluster-delay", "1ms"}, "--cluster-delay: needs --cluster"},
		{[]string{"--cluster", "nats://127.0.0.1:4222", "--cluster-delay", "-1ms"}, "--cluster-delay: -1ms is negative"},
		{[]string{"--ready-delay", "-1s"}, "-ready-delay"},
		{[]string{"--stop-delay", "2m"}, "--stop-delay: 2m0s is over 1m"},
		{[]string{"extra"}, `"extra"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(tt.args, &bytes.Buffer{}, &stderr)
			var u usageError
			if !errors.As(err, &u) {
				t.Fatalf("run: %v, want a usage error (exit 2)", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not name %s", err, tt.want)
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite testdata/usage.golden")

// -h exits 0 and prints every flag; the text is pinned by a golden file.
func TestHelpGolden(t *testing.T) {
	var stderr bytes.Buffer
	if err := run([]string{"-h"}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("run -h: %v", err)
	}
	path := filepath.Join("testdata", "usage.golden")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(path, stderr.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if diff := cmp.Diff(string(want), stderr.String()); diff != "" {
		t.Errorf("usage differs (-want +got); if intended, go test -update:\n%s", diff)
	}
}
