// Package procfs reads the few /proc files the harness, the load
// generator, calibration, the benchmarks and pinning need, each parsed in
// one place: a process's or a thread's stat, a thread's schedstat, a
// process's status (memory, threads, context switches, capabilities), the
// list of a process's threads and of a thread's children, the CPU's model
// name, uptime, this process's mounts and cgroups, and the owners of TCP
// sockets.
//
// Every reader takes the file's bytes from the kernel once. The counters
// read at every tick (stat, schedstat, status) are parsed without
// allocating per field; a process or thread that is gone between listing
// and reading is an error the caller skips, never a zero value that reads
// as "used no CPU".
//
// The parsers are plain functions over bytes (ParseStat, ParseSchedstat,
// ParseStatus, ParseCPUModel, ParseMountinfo, ParseCgroups) so they are
// tested on fixed lines, including a command name that holds spaces and
// parentheses, which is why stat is split after the last ')'.
package procfs
