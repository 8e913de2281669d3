package load

import "strings"

// RedactCommand returns args with the value of --secret replaced by "***",
// in both the "--secret v" and "--secret=v" forms (one or two dashes), so
// a command line can be recorded in meta.command without the secret.
func RedactCommand(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i := 0; i < len(out); i++ {
		a := out[i]
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || name != "secret" {
			continue
		}
		if hasValue {
			out[i] = a[:strings.Index(a, "=")+1] + "***"
		} else if i+1 < len(out) {
			out[i+1] = "***"
			i++
		}
	}
	return out
}
