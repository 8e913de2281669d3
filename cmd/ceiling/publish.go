package main

import (
	"errors"
	"io"
)

// runPublish is replaced by the real subcommand as it lands.
func runPublish(args []string, stdout, stderr io.Writer) error {
	return errors.New("ceiling publish: not built yet")
}
