package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startProc builds refserver as a plain binary (the test binary may carry
// the race detector, whose shadow memory would swamp an RSS figure), runs
// it with args, and returns its address and pid; it is killed when the
// test ends.
func startProc(t *testing.T, args ...string) (addr string, pid int) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "refserver")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, append([]string{"--addr", "127.0.0.1:0"}, args...)...)
	stderr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan struct{})
	go func() { cmd.Wait(); pw.Close(); close(waited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-waited })
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() {
		t.Fatalf("no output from refserver: %v", lines.Err())
	}
	addr, ok := strings.CutPrefix(lines.Text(), "refserver listening on ")
	if !ok {
		t.Fatalf("first line %q", lines.Text())
	}
	go io.Copy(io.Discard, stderr)
	return addr, cmd.Process.Pid
}

// procKiB reads a "Name:   N kB" line of /proc/PID/status.
func procKiB(t *testing.T, pid int, name string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("%s: %q", name, line)
			}
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", name, pid)
	return 0
}

// rawPost sends a POST over its own connection, writing the body while it
// reads the response, so a server that answers before reading the body
// (and then closes) still gives a status. chunked hides the length.
func rawPost(addr, pathAndQuery string, body []byte, chunked bool) (int, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	hdr := "POST " + pathAndQuery + " HTTP/1.1\r\nHost: " + addr + "\r\nContent-Type: application/json\r\n"
	if chunked {
		hdr += "Transfer-Encoding: chunked\r\n\r\n"
	} else {
		hdr += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n"
	}
	go func() {
		w := bufio.NewWriterSize(c, 64<<10)
		w.WriteString(hdr)
		for rest := body; len(rest) > 0; {
			n := min(len(rest), 1<<20)
			if chunked {
				fmt.Fprintf(w, "%x\r\n", n)
			}
			if _, err := w.Write(rest[:n]); err != nil {
				return // the server answered and closed: stop sending
			}
			if chunked {
				w.WriteString("\r\n")
			}
			rest = rest[n:]
		}
		if chunked {
			w.WriteString("0\r\n\r\n")
		}
		w.Flush()
	}()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}
