package pinning

import "strings"

// The race runtime sleeps atexit_sleep_ms (1 s by default) before a
// process exits, so that other threads can finish their reports. In a
// -race test binary every supervisor is that binary again, and a point
// stops its servers one after the other: each one's stop waited out that
// sleep. supervisorEnv gives the supervisor
// atexit_sleep_ms=0 (it still reports races, and still exits 66 after
// one); targetEnv gives the target the GORACE it would have had.

// envGoraceWas keeps GORACE as the caller had it: "=" then its value, or
// "unset".
const envGoraceWas = "CEILING_PIN_GORACE_WAS"

const goraceQuickExit = "atexit_sleep_ms=0"

// supervisorEnv is environ with atexit_sleep_ms=0 added to GORACE, and
// the original recorded, in a -race build; environ itself otherwise.
func supervisorEnv(environ []string, race bool) []string {
	if !race {
		return environ
	}
	was, set := "unset", ""
	env := make([]string, 0, len(environ)+2)
	for _, kv := range environ {
		switch {
		case strings.HasPrefix(kv, envGoraceWas+"="):
			// Ours from an outer supervisor's env: not the caller's.
			continue
		case strings.HasPrefix(kv, "GORACE="):
			was, set = "="+kv[len("GORACE="):], kv[len("GORACE="):]+" "
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GORACE="+set+goraceQuickExit, envGoraceWas+"="+was)
}

// targetEnv undoes supervisorEnv: GORACE as it was, without the record.
// environ without the record is returned as it is.
func targetEnv(environ []string) []string {
	was, ok := "", false
	for _, kv := range environ {
		if strings.HasPrefix(kv, envGoraceWas+"=") {
			was, ok = kv[len(envGoraceWas)+1:], true
		}
	}
	if !ok {
		return environ
	}
	env := make([]string, 0, len(environ))
	for _, kv := range environ {
		if strings.HasPrefix(kv, envGoraceWas+"=") || strings.HasPrefix(kv, "GORACE=") {
			continue
		}
		env = append(env, kv)
	}
	if v, set := strings.CutPrefix(was, "="); set {
		env = append(env, "GORACE="+v)
	}
	return env
}
