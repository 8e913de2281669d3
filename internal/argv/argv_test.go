package argv

import "testing"

func TestFlag(t *testing.T) {
	tests := []struct {
		a, name, value string
		inline, ok     bool
	}{
		{"--rate", "rate", "", false, true},
		{"-rate=5", "rate", "5", true, true},
		{"--secret=a=b", "secret", "a=b", true, true},
		{"---x", "x", "", false, true},
		{"--", "", "", false, false},
		{"-", "", "", false, false},
		{"rate", "", "", false, false},
		{"", "", "", false, false},
	}
	for _, tt := range tests {
		name, value, inline, ok := Flag(tt.a)
		if name != tt.name || value != tt.value || inline != tt.inline || ok != tt.ok {
			t.Errorf("Flag(%q) = %q %q %v %v, want %q %q %v %v", tt.a, name, value, inline, ok, tt.name, tt.value, tt.inline, tt.ok)
		}
	}
}

func TestValue(t *testing.T) {
	tests := []struct {
		args  []string
		value string
		given bool
	}{
		{[]string{"--scenario", "fanout"}, "fanout", true},
		{[]string{"-scenario=echo", "--scenario", "script"}, "script", true}, // the last wins
		{[]string{"--scenario"}, "", false},
		{[]string{"--url", "x", "--", "--scenario", "fanout"}, "", false}, // after --: arguments
		{[]string{"--scenario-file", "f.json"}, "", false},
	}
	for _, tt := range tests {
		v, ok := Value(tt.args, "scenario")
		if v != tt.value || ok != tt.given {
			t.Errorf("Value(%q) = %q %v, want %q %v", tt.args, v, ok, tt.value, tt.given)
		}
	}
}
