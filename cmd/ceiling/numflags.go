package main

import (
	"strconv"

	"github.com/ceiling-bench/ceiling/harness/knob"
)

// finiteFloat is a float64 flag that refuses NaN and the infinities at
// parse time. flag.Float64Var takes them (strconv.ParseFloat does), and
// they then slip past every range check written with < and >: a NaN rate
// reads as "not open loop" and a NaN fraction cannot be encoded in JSON.
// Range checks stay with the validation of the whole config.
type finiteFloat struct{ f *float64 }

func (v finiteFloat) String() string {
	if v.f == nil {
		return ""
	}
	return strconv.FormatFloat(*v.f, 'g', -1, 64)
}

func (v finiteFloat) Set(s string) error {
	f, err := knob.ParseFraction(s)
	if err != nil {
		return err
	}
	*v.f = f
	return nil
}
