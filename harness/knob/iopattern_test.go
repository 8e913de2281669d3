package knob

import (
	"errors"
	"strings"
	"testing"
)

// IO_PATTERN is ceiling load's echo --eager-reads: another generator or
// scenario is refused by name before anything boots.
func TestIOPatternChecks(t *testing.T) {
	for _, tc := range []struct {
		name, pattern, generator, scenario string
		want                               string // "" = accepted
	}{
		{"default", "batch-wake", "", "echo", ""},
		{"eager", "eager", "", "echo", ""},
		{"eager through ceiling load by path", "eager", "bin/ceiling load", "echo", ""},
		{"default with another generator", "batch-wake", "node gen.js", "echo", ""},
		{"unknown", "lazy", "", "echo", `IO_PATTERN (--io-pattern): "lazy" is not a pattern`},
		{"eager with another generator", "eager", "node gen.js", "echo", `reads its own way`},
		{"eager on fanout", "eager", "", "fanout", `not fanout's`},
	} {
		o := DefaultOptions(false)
		o.IOPattern, o.Generator, o.Scenario = tc.pattern, tc.generator, tc.scenario
		var ioErr error
		for _, err := range o.CheckKnobs() {
			if strings.HasPrefix(err.Error(), "IO_PATTERN") {
				ioErr = errors.Join(ioErr, err)
			}
		}
		switch {
		case tc.want == "" && ioErr != nil:
			t.Errorf("%s: refused: %v", tc.name, ioErr)
		case tc.want != "" && (ioErr == nil || !strings.Contains(ioErr.Error(), tc.want)):
			t.Errorf("%s: error %v, want it to say %q", tc.name, ioErr, tc.want)
		}
	}
}
