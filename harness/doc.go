// Package harness runs `ceiling sweep`.
package harness
