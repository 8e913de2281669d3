package main

import (
	"errors"
	"io"
)

// runSweep is replaced by the real subcommand as it lands.
func runSweep(args []string, stdout, stderr io.Writer) error {
	return errors.New("ceiling sweep: not built yet")
}
