package supervise

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// WaitPortFree waits until addr (host:port) can be listened on again, so
// the next point's server does not fail to bind (or, worse, the probe does
// not find the previous server still answering). Only "address in use"
// is waited out; any other listen error returns at once.
func WaitPortFree(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil {
			return ln.Close()
		}
		if !errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("check port %s is free: %w", addr, err)
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("port %s still in use after %s: %w", addr, timeout, err)
		}
		time.Sleep(pollEvery)
	}
}
