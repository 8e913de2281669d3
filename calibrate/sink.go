package calibrate

import (
	"context"
	"fmt"
	"io"
	"net"
)

// How the null sink writes its replies (Config.SinkWrites).
const (
	// WritesBatched: the replies one read calls for in one write(2), so
	// the server side costs as little as it can.
	WritesBatched = "batched"
	// WritesPerMessage: one write(2) per reply, as most servers write, so
	// the generator's receive path gets a segment per message, as it does
	// against them; the sink then costs about what the generator does.
	WritesPerMessage = "per-message"
)

// SinkMain is the sink process (Config.Sink): it listens on a free
// loopback port, prints "ready ADDR" on stdout and serves the echo null
// sink with loops epoll loops until ctx ends.
func SinkMain(ctx context.Context, stdout io.Writer, recordSize, loops int, writes string) error {
	if recordSize < 1 || recordSize > 1<<20 {
		return fmt.Errorf("--record-size: %d is not in 1..1048576", recordSize)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(stdout, "ready %s\n", ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	return ServeSink(ctx, ln, recordSize, loops, writes)
}
