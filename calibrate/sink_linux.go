//go:build linux

package calibrate

import (
	"context"
	"errors"
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// ServeSink serves the echo null sink on ln until ctx ends: each
// connection is upgraded, taken out of Go's netpoller and handed to one of
// loops Echoers (round robin) that answer every masked client frame of
// recordSize bytes with a pre-built unmasked frame of the same size: all
// the replies one read calls for in one write(2) (writes WritesBatched),
// or one write(2) per reply (WritesPerMessage).
func ServeSink(ctx context.Context, ln net.Listener, recordSize, loops int, writes string) error {
	copies := 0 // the Echoer's default: up to 256 replies per write
	switch writes {
	case WritesBatched, "":
	case WritesPerMessage:
		copies = 1
	default:
		return fmt.Errorf("sink writes %q: want %s or %s", writes, WritesBatched, WritesPerMessage)
	}
	payload := make([]byte, recordSize)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	echoers := make([]*Echoer, max(loops, 1))
	done := make(chan struct{}, len(echoers))
	for i := range echoers {
		e, err := NewEchoer(EchoerConfig{Unit: ClientFrameSize(recordSize), Reply: ServerFrame(payload), Copies: copies})
		if err != nil {
			for _, made := range echoers[:i] {
				made.Close()
			}
			return err
		}
		echoers[i] = e
	}
	for _, e := range echoers {
		go func() { e.Run(); done <- struct{}{} }()
	}
	defer func() {
		for _, e := range echoers {
			e.Close()
		}
		for range echoers {
			<-done
		}
	}()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	for i := 0; ; i++ {
		nc, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		rest, err := Upgrade(nc)
		if err != nil {
			nc.Close()
			continue
		}
		fd, err := detach(nc)
		if err != nil {
			return err
		}
		if err := echoers[i%len(echoers)].Add(fd, len(rest), false); err != nil {
			unix.Close(fd)
			return err
		}
	}
}

// detach duplicates nc's socket descriptor and closes nc (taking the
// socket out of Go's netpoller; it lives on through the duplicate).
func detach(nc net.Conn) (int, error) {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		nc.Close()
		return -1, fmt.Errorf("calibrate: sink needs TCP, have %T", nc)
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var dupErr error
	if err := rc.Control(func(s uintptr) { fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	if dupErr != nil {
		return -1, dupErr
	}
	if err := tc.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}
