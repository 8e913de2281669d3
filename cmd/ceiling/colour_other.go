//go:build !linux

package main

import "os"

// isTerminal is false where ceiling does not look: no colour.
func isTerminal(*os.File) bool { return false }
