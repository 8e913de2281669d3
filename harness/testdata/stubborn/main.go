// Command stubborn is the reference server ignoring SIGTERM, for the
// harness's tests of a bounded stop: only SIGKILL ends it. It prints
// "stubborn: listening" once it accepts connections.
package main

import (
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/ceiling-bench/ceiling/refserver"
)

func main() {
	signal.Ignore(syscall.SIGTERM)
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	srv, err := refserver.New(refserver.Config{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("stubborn: listening")
	_ = srv.Serve(l)
}
