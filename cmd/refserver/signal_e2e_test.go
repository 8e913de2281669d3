//go:build e2e

package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// A real process: the listening line on stderr, no sooner than its
// --ready-delay, and after SIGTERM it keeps serving for its --stop-delay
// before it closes sockets with 1012 and exits 0. Only lower bounds are
// checked: a busy machine makes it later, never sooner. (Without the
// delays the same happens at once: the delays only wait.)
func testSlowBootAndStop(t *testing.T) {
	const ready, drain = 400 * time.Millisecond, 600 * time.Millisecond
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), beMain+"=1", "REFSERVER_TEST_ARGS=--addr 127.0.0.1:0 --ready-delay "+ready.String()+" --stop-delay "+drain.String())
	stderr, pw := io.Pipe()
	cmd.Stderr = pw
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	waited := make(chan struct{})
	go func() { exited <- cmd.Wait(); pw.Close(); close(waited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-waited
	})
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() {
		t.Fatalf("no output from refserver: %v", lines.Err())
	}
	addr, ok := strings.CutPrefix(lines.Text(), "refserver listening on ")
	if !ok {
		t.Fatalf("first line %q", lines.Text())
	}
	if took := time.Since(start); took < ready {
		t.Errorf("listening after %s, before its --ready-delay %s", took, ready)
	}
	go io.Copy(io.Discard, stderr)
	c, _, err := websocket.DefaultDialer.Dial("ws://"+addr+"/echo", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	termed := time.Now()
	// Still serving while it drains.
	if err := c.WriteMessage(websocket.TextMessage, []byte("x")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.ReadMessage(); err != nil {
		t.Fatalf("no echo while draining: %v", err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, _, err = c.ReadMessage()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.CloseServiceRestart {
		t.Errorf("after the drain: %v, want close 1012", err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit: %v, want status 0", err)
		}
		if took := time.Since(termed); took < drain {
			t.Errorf("exited %s after SIGTERM, before its --stop-delay %s", took, drain)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("refserver did not exit within 15s of SIGTERM")
	}
}

// TestProcess: refserver as a real process: it boots and drains as long
// as it is told, and stops with 1012 and status 0; and large request
// bodies leave its RSS bounded (bodies_e2e_test.go).
func TestProcess(t *testing.T) {
	t.Run("slow boot and stop", testSlowBootAndStop)
	t.Run("large bodies keep RSS bounded", testLargeBodiesKeepRSSBounded)
}
