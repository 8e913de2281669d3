//go:build !linux

package calibrate

import (
	"context"
	"net"
)

// ServeSink needs Linux.
func ServeSink(ctx context.Context, ln net.Listener, recordSize, loops int, writes string) error {
	return errUnsupported
}
