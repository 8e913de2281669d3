// Package wire holds the documents that cross the process boundary between
// generator and harness, and that the sweep's result document carries on:
// the generator's whole document (Result: its meta, its Config as
// recorded, its Summary with the scenarios' inline blocks and its
// Timeline, and the generator's evidence about itself, GeneratorStats),
// its latency percentiles (Latency), what --drop found (DropResult), each
// server's share of a run over several (ServerShare, SharesOf), an agent's
// part of a point (AgentReport, and Agent with the agent's own Result),
// the calibration document that `ceiling calibrate` writes and `ceiling
// sweep` records (Doc, with NearCap and SkipReason), and the generator
// contract's vocabulary that the knobs check against: the scenarios
// registered (ScenarioNames), the source addresses (ParseSourceAddrs),
// the I/O patterns and the largest record.
//
// It is a leaf: it imports the standard library only, so that the result
// document (package result) and everything that reads it (publish, the
// site), and the harness's deciders (the verdict, the schedule, the
// knobs), link these types without linking the generator engine (load),
// the agents (harness/agents) or the calibrator (calibrate), which pin,
// spawn and measure. Those packages name the same types by alias
// (load.Result = wire.Result, agents.Agent = wire.Agent, calibrate.Doc =
// wire.Doc), so their APIs are unchanged. The JSON names and shapes here
// are the contract of both documents (load.Result and result.Result) and
// change only with their schema versions.
//
// A Result's Config is the config as recorded: load.Config's fields, with
// the scenario's own knobs kept as the JSON the scenario wrote
// (Config.Params), so that reading a document back needs no scenario.
// What needs the scenario registry or the engine (load.Config with its
// typed Params and Validate, CollectMeta, calibrate.Run) stays where it
// is.
package wire
