// Package memsample measures the memory a process tree holds: the server
// under test (its whole tree; every server of a target of several, each
// named) and the generator, at a point's baseline and over its measured
// window.
//
// # The measure
//
// Each process's memory is read from /proc/PID/smaps_rollup (Linux 4.14
// and later): its PSS, the proportional set size, where a page mapped by
// n processes counts 1/n in each. Summed over a tree, PSS counts every
// page once; RSS, which counts a shared page in every process that maps
// it, would count a server's forks' shared pages once per fork. Where a
// process's smaps_rollup cannot be read (an older kernel, or a process of
// another user that this one may not trace), its RSS (/proc/PID/status
// VmRSS) is read instead, and a reading with any such process is an RSS
// reading: its Measure is RSS, never a sum of both. RSS is read beside
// PSS always, so a window can fall back to RSS as a whole when its
// baseline could read only RSS.
//
// Reading smaps_rollup walks the process's page tables: it costs more
// than the status file the CPU sampler reads, and more the larger the
// process. Memory is sampled once a second (DefaultInterval), a quarter
// as often as CPU.
//
// # API
//
//	base := memsample.Read(cpusample.Tree(pid)) // after boot, before any connection
//	g := memsample.StartGroup(ctx, memsample.DefaultInterval, cpusample.Tree(pid))
//	... // the measured window
//	total, parts := g.Stop() // Stats: Peak and End, in PSS and RSS
//	pc := memsample.PerConnection(base, total, open)
//
// StartGroup reads once at once (the window opens) and then every
// interval until Stop, which reads once more (the window's end). A group
// of several trees (the servers of a cluster target) reads them at the
// same instants, so the total's peak is the peak of their sum, not a sum
// of peaks taken at different times.
//
// # Per connection
//
// Memory per connection is a slope: (peak over the window - baseline) /
// connections open, where the baseline is read after the server is ready
// and before the generator connects. It is not memory / connections: a
// server's memory at rest is not what its connections cost. A figure
// below zero (the server returned memory between its baseline and the
// window) is kept as measured, never clamped.
package memsample
