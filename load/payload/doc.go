// Package payload builds the values `ceiling load` sends: a pool generated
// once, before the run, from a mode, a seed and a record size.
//
// The same (mode, seed, size) gives byte-identical values on every machine:
// the generator is our own splitmix64 stream (never math/rand), seeded from
// --payload-seed, and nothing depends on the clock, the locale or the map
// order. Golden vectors (golden.json, embedded) pin the bytes; CheckGolden
// is what `ceiling load --self-test` runs.
//
// Modes:
//
//	constant  every byte is 'x' (compresses to nothing; the historical default)
//	json      an event-like JSON document of exactly the record size
//	random    seeded noise, the incompressible control (sent as binary frames)
//
// The pool holds about 8 MiB of values, capped at 65536 values and never
// fewer than one batch per connection. Values live in one contiguous
// backing array, so taking a value is slicing, never allocating. The
// constant mode's values are equal byte for byte, so it keeps one that
// every index returns: the bytes sent are the same, without 8 MiB of 'x'
// in the generator's memory and streamed through its caches by the
// framing of every message sent. Each
// connection starts on a batch of its own (Start) and walks forward, so no
// batch repeats a value and a connection sends a value again only after it
// has sent the whole pool.
package payload
