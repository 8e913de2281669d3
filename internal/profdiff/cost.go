package profdiff

import (
	"errors"
	"math"
	"strings"
)

// Block is one profiled point: its profile and the messages the server
// handled while it was recorded.
type Block struct {
	Profile  *Profile
	Messages float64
}

// FrameCost is one function's cost in a block, in CPU nanoseconds per
// message: Self where it was the leaf, Total where it was anywhere on the
// stack (once per stack, however often it recursed). Samples is the
// samples behind Total (its counting noise).
type FrameCost struct {
	Self, Total float64
	Samples     int64
}

// Costs is every function's cost per message in b, and the block's whole
// CPU per message.
func Costs(b Block) (map[string]FrameCost, float64, error) {
	if err := b.check(); err != nil {
		return nil, 0, err
	}
	out := map[string]FrameCost{}
	seen := map[string]bool{}
	for stack, w := range b.Profile.Stacks {
		frames := strings.Split(stack, ";")
		ns := float64(w.Ns) / b.Messages
		clear(seen)
		for i, f := range frames {
			c := out[f]
			if !seen[f] {
				seen[f] = true
				c.Total += ns
				c.Samples += w.Samples
			}
			if i == len(frames)-1 {
				c.Self += ns
			}
			out[f] = c
		}
	}
	return out, float64(b.Profile.Ns) / b.Messages, nil
}

// nsPerSample is the mean period of b's samples.
func (b Block) nsPerSample() float64 {
	if b.Profile.Samples == 0 {
		return 0
	}
	return float64(b.Profile.Ns) / float64(b.Profile.Samples)
}

func (b Block) check() error {
	switch {
	case b.Profile == nil:
		return errors.New("a block without a profile")
	case !(b.Messages > 0) || math.IsInf(b.Messages, 0):
		return errors.New("a block that handled no messages: no cost per message")
	case b.Profile.Samples == 0:
		return errors.New("a block with no sample")
	case b.Profile.Ns <= 0:
		return errors.New("a block whose samples carry no period: no CPU time")
	}
	return nil
}
