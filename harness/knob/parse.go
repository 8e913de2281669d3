package knob

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ceiling-bench/ceiling/internal/cpuset"
)

func compareKnob(k Knob) Knob {
	k.Doc = DocCompare
	return k
}

func boolKnob(env, flag, help string, field func(*Options) *bool) Knob {
	return Knob{
		Env: env, Flag: flag, Default: "off", Help: help,
		Parse: func(o *Options, _, v string) error {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return fmt.Errorf("%q is not a boolean (use 1 or 0)", v)
			}
			*field(o) = b
			return nil
		},
		Get: func(o *Options) string { return strconv.FormatBool(*field(o)) },
	}
}

// durationKnob: a Go duration or bare seconds, never negative (ParseSeconds)
// nor above MaxDuration; a window must also be above zero.
func durationKnob(env, flag, def, help string, field func(*Options) *time.Duration, window bool) Knob {
	k := Knob{
		Env: env, Flag: flag, Arg: "DURATION", Default: def, Help: help,
		Parse: func(o *Options, _, v string) error {
			d, err := ParseSeconds(v)
			if err == nil {
				*field(o) = d
			}
			return err
		},
		Check: func(o *Options) error {
			switch d := *field(o); {
			case d < 0:
				return fmt.Errorf("%s is negative", d)
			case window && d == 0:
				return fmt.Errorf("%s is not a positive duration", d)
			case d > MaxDuration:
				return fmt.Errorf("%s is above the limit of %s", d, MaxDuration)
			}
			return nil
		},
		Get: func(o *Options) string { return field(o).String() },
	}
	return k
}

func cpusetParse(field func(*Options) *cpuset.Set) func(*Options, string, string) error {
	return func(o *Options, _, v string) error {
		s, err := cpuset.Parse("", v)
		*field(o) = s
		return err
	}
}

// intParse reads an integer; what range it must be in is the row's Check.
func intParse(field func(*Options) *int) func(*Options, string, string) error {
	return func(o *Options, _, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%q is not an integer", v)
		}
		*field(o) = n
		return nil
	}
}

func positive(field func(*Options) int, what string) func(*Options) error {
	return func(o *Options) error {
		if n := field(o); n <= 0 {
			return fmt.Errorf("%d is not a positive %s", n, what)
		}
		return nil
	}
}

// oneOf is the Check of a knob whose value is one of values: the error
// names what it is and lists them.
func oneOf(field func(*Options) string, what string, values ...string) func(*Options) error {
	return func(o *Options) error {
		if v := field(o); !slices.Contains(values, v) {
			return fmt.Errorf("%q is not a %s (%s)", v, what, strings.Join(values, " | "))
		}
		return nil
	}
}

func stringParse(field func(*Options) *string) func(*Options, string, string) error {
	return func(o *Options, _, v string) error {
		*field(o) = v
		return nil
	}
}
