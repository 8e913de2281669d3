package wsconn

import (
	"context"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// bindAddressNoPort sets IP_BIND_ADDRESS_NO_PORT before the dialer binds
// its local address: the port is chosen at connect time (SourceAddrs).
func bindAddressNoPort(_ context.Context, _, _ string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_BIND_ADDRESS_NO_PORT, 1)
	}); err != nil {
		return err
	}
	if serr != nil {
		return os.NewSyscallError("setsockopt IP_BIND_ADDRESS_NO_PORT", serr)
	}
	return nil
}
