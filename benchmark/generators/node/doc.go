// Package nodegen holds the tests of the Node.js generator in this directory
// (gen.js, on the ws package; docs/generators.md), a second generator that
// shares no code with the server or with `ceiling load`.
//
// The tests check it keeps the GENERATOR contract (bad flags exit 2 before
// connecting; the marker, the window and a schema_version 2 load.Result
// for echo and fanout), that fanout takes a repeated --url as
// load/scenario/fanout does (cluster_test.go: subscriber i on server
// i mod N, channel ceiling-((i div N) mod --channels), publisher p's k-th
// request through server (p + k) mod N, a preflight that fails unless
// every server hears what is published through each, and
// summary.fanout.servers), that its percentiles come from a real
// histogram (its --self-test), and that both generators measure the same
// server-saturated point alike (agree_test.go): refserver is held to a CPU
// quota far below what either generator needs, so the server is the
// bottleneck for both, and the two generators' throughputs, measured in
// alternating repeats, must differ by no more than the spread of one
// generator's own repeats (the noise floor) or a documented minimum.
//
// They need node and the generator's node_modules (npm ci --prefix
// benchmark/generators/node, which .ci/run does); without them the tests
// skip, except under CI=true, where they fail.
package nodegen
