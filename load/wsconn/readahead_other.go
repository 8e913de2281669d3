//go:build !unix

package wsconn

import "errors"

// ExpectBytes needs SO_RCVLOWAT; elsewhere it does nothing and
// LowWaterErr says so.
func (c *Conn) ExpectBytes(n int) {}

// LowWaterErr is the error that disabled ExpectBytes.
func (c *Conn) LowWaterErr() error { return errors.New("websocket: ExpectBytes needs a unix system") }

func (c *Conn) setLowWater() {}
