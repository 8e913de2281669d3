package publish

// OptionError is an option the library refused (a CommitOptions or
// comment setting, named by its flag in the message): bad input, which
// the command line maps to exit status 2 with errors.As, never by reading
// the message.
type OptionError struct{ Err error }

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }
