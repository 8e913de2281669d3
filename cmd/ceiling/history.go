package main

import "io"

func runHistory(args []string, stdout, stderr io.Writer) error {
	return usagef("ceiling history: not built yet")
}
