package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
)

// runK8s runs ceiling-k8s, the binary built beside this one (make build;
// cmd/ceiling-k8s says why it is a binary of its own), with the same
// arguments and streams, and returns its exit status.
func runK8s(args []string, stdout, stderr io.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	bin := filepath.Join(filepath.Dir(self), "ceiling-k8s")
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("k8s: %s is not built (make build, or go build -o %s ./cmd/ceiling-k8s): %w",
			bin, filepath.Dir(bin), err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	// ^C and SIGTERM are ceiling-k8s's to handle (it deletes what it
	// created, then exits 130): pass them on and wait for it.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	signal.Stop(sigs)
	close(sigs)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 {
		// ceiling-k8s has printed its own message.
		return exitStatus{ee.ExitCode(), errors.New("ceiling-k8s exited with status " + fmt.Sprint(ee.ExitCode()))}
	}
	return err
}
