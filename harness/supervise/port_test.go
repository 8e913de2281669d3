package supervise

import (
	"net"
	"strings"
	"testing"
	"time"
)

func TestWaitPortFree(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	err = WaitPortFree(addr, 200*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "port "+addr+" still in use after 200ms") {
		t.Errorf("busy port: err = %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- WaitPortFree(addr, 30*time.Second) }()
	time.Sleep(100 * time.Millisecond)
	ln.Close()
	if err := <-done; err != nil {
		t.Errorf("freed port: %v", err)
	}
	if err := WaitPortFree("256.0.0.1:1", time.Minute); err == nil || strings.Contains(err.Error(), "still in use") {
		t.Errorf("bad address: err = %v, want an immediate listen error", err)
	}
}
