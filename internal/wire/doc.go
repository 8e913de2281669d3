// Package wire holds the documents that cross the process boundary between
// generator and harness, and that the sweep's result document carries on:
// the generator's meta (Meta, Hardware), its latency percentiles
// (Latency), its evidence about itself (GeneratorStats), what --drop found
// (DropResult), each server's share of a run over several (ServerShare,
// SharesOf), and the calibration document that `ceiling calibrate` writes
// and `ceiling sweep` records (Doc, with NearCap and SkipReason).
//
// It is a leaf: it imports the standard library only, so that the result
// document (package result) and everything that reads it (publish, the
// site) link these types without linking the generator engine (load) or
// the calibrator (calibrate), which pin, spawn and measure. Those two
// packages name the same types by alias (load.Meta = wire.Meta,
// calibrate.Doc = wire.Doc), so their APIs are unchanged. The JSON names
// and shapes here are the contract of both documents (load.Result and
// result.Result) and change only with their schema versions.
//
// What needs the scenario registry or the engine (load.Result, its Config
// and Summary, CollectMeta, calibrate.Run) stays where it is.
package wire
