// Package jsonscan holds the byte-level JSON primitives that the hot paths
// share instead of encoding/json: the load generator's message scanners
// (load/pusherclient, load/scenario/script), the reference server's REST
// decoder (refserver) and the string escaper of the encoders (pusher,
// script templates).
//
// Design. Every function works on a []byte and an index into it and
// returns an index (or sub-slice) back: nothing is decoded into Go values
// and nothing allocates, which the package's AllocsPerRun tests hold. A
// string is returned as written, escapes and all; keys are compared by
// decoding their escapes on the fly (KeyEqual).
//
// Two levels of strictness, chosen by the caller:
//
//   - The lenient scanners (EndOfString, EndOfNested, EndOfValue, the
//     object walk OpenObject/ReadKey/NextMember, Lookup, LookupTop) check
//     the structure needed to find a value (strings, nesting, commas,
//     colons), not the full grammar. On valid JSON they agree with
//     encoding/json (FuzzLookup); on invalid JSON they report not found
//     or return some value, and never panic. Brackets are counted, not
//     matched by kind.
//   - The strict scanners (ScanString, ScanNumber) accept exactly what
//     encoding/json accepts, UTF-8 validity aside (the caller checks
//     that), and say where and why they refuse (FuzzStrict).
//
// AppendString escapes like encoding/json without HTML escaping (the
// pusher encoders); AppendVerbatim is the byte-transparent variant for
// script templates, whose random payloads must keep their bytes: invalid
// UTF-8 is copied, not replaced by U+FFFD (FuzzEscape holds both).
package jsonscan
