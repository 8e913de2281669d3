package result

import (
	"reflect"

	"github.com/ceiling-bench/ceiling/internal/redact"
)

// RedactResult replaces every known secret in every string of r — command
// lines, URLs, log tails, reasons, warnings, and any string field added
// later — by redact.Mask. Command lines get redact.Set.Args: a secret
// flag's value is masked whole.
func RedactResult(r *Result, s *redact.Set) {
	if r == nil {
		return
	}
	r.Meta.Command = s.Args(r.Meta.Command)
	RedactTargetArgs(&r.Meta.Target, s)
	if r.Meta.BaseTarget != nil {
		RedactTargetArgs(r.Meta.BaseTarget, s)
	}
	if s.Len() == 0 {
		return
	}
	redactValue(reflect.ValueOf(r).Elem(), s)
}

// redactTargetArgs masks the secret flag values of a target's command
// lines (redact.Set.Args).
func RedactTargetArgs(t *Target, s *redact.Set) {
	t.Command = s.Args(t.Command)
	for i := range t.Servers {
		t.Servers[i].Command = s.Args(t.Servers[i].Command)
	}
}

func redactValue(v reflect.Value, s *redact.Set) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(s.String(v.String()))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			redactValue(v.Elem(), s)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				redactValue(v.Field(i), s)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			redactValue(v.Index(i), s)
		}
	case reflect.Map:
		// Map values are not addressable: each is copied, redacted and
		// put back (keys are left as they are).
		for _, k := range v.MapKeys() {
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(v.MapIndex(k))
			redactValue(e, s)
			v.SetMapIndex(k, e)
		}
	}
}
