package load

import "github.com/ceiling-bench/ceiling/internal/redact"

// RedactCommand returns args with the value of every secret flag
// (--secret, --token, --password and the other names redact.SecretName
// knows, in the "--name v" and "--name=v" forms) replaced by
// redact.Mask, so a command line can be recorded in meta.command without
// them. It is the redactor the harness uses for the commands it records.
func RedactCommand(args []string) []string { return (*redact.Set)(nil).Args(args) }
