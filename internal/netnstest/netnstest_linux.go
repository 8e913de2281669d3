// Package netnstest runs a test inside a network namespace of its own, so
// it may shrink sysctls such as the ephemeral port range and open
// hundreds of loopback connections without touching the host: the test
// re-runs its own binary, cloned with CLONE_NEWNET (root only), and the
// copy inside the namespace brings lo up and does the work.
//
//	func TestX(t *testing.T) {
//		if netnstest.Child() {
//			netnstest.LoopbackUp(t)
//			netnstest.PortRange(t, 40000, 40099)
//			... the test proper ...
//			return
//		}
//		netnstest.Run(t, "TestX") // skips (with the reason) where it cannot
//	}
package netnstest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const childEnv = "CEILING_NETNSTEST_CHILD"

// Child reports whether this is the copy running inside the namespace.
func Child() bool { return os.Getenv(childEnv) == "1" }

// Run re-runs the test named name in a child process in a new network
// namespace, bounded to a minute, and fails t when the child fails. It
// skips, saying why, when not root or when no namespace can be made
// (never under CI=true as root: that is a failure).
func Run(t *testing.T, name string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create a network namespace (CLONE_NEWNET)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Its own timeout, inside ours: the child's tests know their deadline
	// (testenv.WaitForSteal waits no longer than it allows).
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1", "-test.timeout=55s")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("cannot start a child in a new network namespace as root: %v", err)
		}
		t.Skipf("cannot create a network namespace here: %v", err)
	}
	t.Logf("child in its own network namespace:\n%s", out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
}

// LoopbackUp sets IFF_UP on lo: a new network namespace starts with it
// down.
func LoopbackUp(t *testing.T) {
	t.Helper()
	err := func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		ifr, err := unix.NewIfreq("lo")
		if err != nil {
			return err
		}
		if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
			return err
		}
		ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
		return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
	}()
	if err != nil {
		t.Fatalf("bringing lo up in the new namespace: %v", err)
	}
}

// PortRange sets the namespace's net.ipv4.ip_local_port_range to lo..hi.
func PortRange(t *testing.T, lo, hi int) {
	t.Helper()
	if err := os.WriteFile("/proc/sys/net/ipv4/ip_local_port_range", []byte(fmt.Sprintf("%d %d", lo, hi)), 0o644); err != nil {
		t.Fatalf("setting the port range: %v", err)
	}
}
