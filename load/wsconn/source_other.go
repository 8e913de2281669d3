//go:build !linux

package wsconn

import (
	"context"
	"syscall"
)

// bindAddressNoPort: IP_BIND_ADDRESS_NO_PORT is Linux's; elsewhere the
// dialer binds address and port together.
func bindAddressNoPort(context.Context, string, string, syscall.RawConn) error { return nil }
