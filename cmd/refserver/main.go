// Command refserver runs the bundled reference server (package refserver):
// /echo, the Pusher protocol 7 subset, its signed REST API, the /rooms
// collaborative-rooms protocol (docs/rooms.md), /health and /metrics.
//
//	refserver [--addr 127.0.0.1:6001] [--app-id ID] [--key KEY] [--secret SECRET] ...
//
// It logs "refserver listening on ADDR" to stderr once the socket is bound
// (a harness may wait for that line or poll /health), and on SIGTERM or
// SIGINT closes every WebSocket with 1012 and exits 0 (a second signal
// ends it at once). --ready-delay and --stop-delay make it slow to boot
// and to stop, as real servers are. Bad flags exit 2
// with a message naming the flag. main only calls run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ceiling-bench/ceiling/refserver"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "refserver:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run serves until SIGTERM or SIGINT.
func run(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// After the first signal, restore the default so a second one ends
	// the process at once instead of waiting for the shutdown.
	go func() { <-ctx.Done(); stop() }()
	return serve(ctx, args, stdout, stderr)
}

// serve parses args, listens, and serves until ctx ends, then shuts down.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	opts, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil // usage already printed
	}
	if err != nil {
		return err
	}
	srv, err := refserver.New(opts.cfg)
	if err != nil {
		return usageError{err}
	}
	if opts.readyDelay > 0 {
		select {
		case <-time.After(opts.readyDelay):
		case <-ctx.Done():
			return nil
		}
	}
	l, err := net.Listen("tcp", opts.cfg.Addr)
	if err != nil {
		return fmt.Errorf("--addr %s: %w", opts.cfg.Addr, err)
	}
	fmt.Fprintf(stderr, "refserver listening on %s\n", l.Addr())

	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()
	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	if opts.stopDelay > 0 {
		fmt.Fprintf(stderr, "refserver draining for %s\n", opts.stopDelay)
		time.Sleep(opts.stopDelay) // a second signal ends the process
	}
	sctx, cancel := context.WithTimeout(context.Background(), opts.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; err != nil && !errors.Is(err, refserver.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintln(stderr, "refserver stopped")
	return nil
}

// usageError marks bad input: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }
