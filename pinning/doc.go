// Package pinning parses CPU lists and starts children pinned to them.
package pinning
