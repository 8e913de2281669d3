//go:build race

package pinning

// raceBuild: this executable was built with -race (a test binary of the
// lanes), so the supervisor it re-execs carries the race runtime too.
const raceBuild = true
