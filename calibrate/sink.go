package calibrate

import (
	"context"
	"fmt"
	"io"
	"net"

	"github.com/ceiling-bench/ceiling/internal/wire"
)

// How the null sink writes its replies (Config.SinkWrites; defined in
// internal/wire with the document that records it).
const (
	WritesBatched    = wire.WritesBatched
	WritesPerMessage = wire.WritesPerMessage
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
