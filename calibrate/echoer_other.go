//go:build !linux

package calibrate

import "errors"

// Supported is whether this system has the raw-syscall echoer (Linux).
const Supported = false

// Echoer is Linux only.
type Echoer struct{}

// EchoerConfig configures an Echoer.
type EchoerConfig struct {
	Unit     int
	Reply    []byte
	Copies   int
	LowWater bool
}

var errUnsupported = errors.New("calibrate: the raw-syscall echoer needs Linux")

// NewEchoer fails: Linux only.
func NewEchoer(EchoerConfig) (*Echoer, error) { return nil, errUnsupported }
func (e *Echoer) Add(int, int, bool) error    { return errUnsupported }
func (e *Echoer) Units() int64                { return 0 }
func (e *Echoer) Reads() int64                { return 0 }
func (e *Echoer) Errors() (int64, string)     { return 0, "" }
func (e *Echoer) Close()                      {}
func (e *Echoer) Run()                        {}
