// Command clientcost measures what each client I/O pattern costs the
// server: one server (refserver's /echo), one point (echo, 16
// connections, batch 10, 256-byte messages, closed loop), driven by
// several clients one after another, every figure taken from the
// server's side in the same way for each. It answers "the server handled
// N messages per CPU-second under client X; why does that differ between
// clients?"
//
// # Why the server's side
//
// On loopback the two ends share one kernel. When the server writes a
// reply, its CPU runs the whole TCP transmit path and, in the softirq
// that follows, the peer's receive path too (queueing the data on the
// client's socket, deciding whether to ACK), and it pays for waking the
// peer: an inter-processor interrupt to the client's CPU when the client
// is asleep in epoll or read. So how a client reads and writes changes
// the server's cost per message: a client that writes each message in
// its own segment makes the server run its receive path once per message,
// a client that wakes (and ACKs) per message makes the server wake it
// per message, a client whose delayed ACKs are turned into quick ACKs
// sends the server pure ACKs to process. A generator that is "cheap" for
// itself can still be expensive for the server, and only the server's
// figures show it.
//
// # What is measured
//
// Each run is a fresh refserver (pinned to the second allowed CPU,
// GOMAXPROCS=1, a free port) and one client (pinned to the first CPU,
// GOMAXPROCS=1), both started through pinning.Command, so their affinity
// is set before their program runs and they get SIGKILL if this program
// dies. This program pins itself to the client's CPU too, so that its own
// polling never lands on the server's CPU. Once refserver's
// refserver_messages_received_total is rising, it waits -warmup, takes
// snapshot A, waits -duration and takes snapshot B. A snapshot holds:
//
//   - the server's message counter (/metrics);
//   - the server's task CPU (sum of /proc/PID/task/*/schedstat, field 1)
//     and its threads' run-queue wait (field 2);
//   - the server CPU's busy jiffies from /proc/stat (user, nice, system,
//     irq and softirq) and its softirq jiffies alone: the CPU-busy basis
//     includes the softirq work the server's CPU did for either end;
//   - the server's voluntary context switches (all its threads);
//   - the RES and CAL interrupt counts (/proc/interrupts) of the client's
//     CPU and of the server's CPU: wake-ups sent to each;
//   - the server sockets' TCP counters (segs_in, segs_out, data_segs_in,
//     data_segs_out from `ss -tinH`), summed over the sockets present in
//     both snapshots;
//   - the client process's task CPU (schedstat, all its threads).
//
// From A and B per run: msg/s; messages per server CPU-second on the
// CPU-busy basis and on the task basis; softirq's share of the server
// CPU; server voluntary switches per message; segments from the client
// per message and, of those, pure ACKs (segs_in - data_segs_in); pure
// ACKs from the server per message (segs_out - data_segs_out); IPIs
// (RES + CAL) to the client's CPU per message; the client's CPU in cores.
//
// # Clients
//
//   - ceiling: bin/ceiling load (event loops, one write per batch, woken
//     once per batch by SO_RCVLOWAT); ceiling-eager: the same with
//     --eager-reads; ceiling-goroutines: the same with --io goroutines;
//     ceiling-busypoll: the same with --busy-poll (the loops never park,
//     so the server never has to wake the client).
//   - node: benchmark/generators/node/gen.js (the ws package); skipped with
//     a NOTE when node or its node_modules is missing.
//   - gorilla-*: this program re-run with -role gorilla, on
//     github.com/gorilla/websocket, one goroutine per connection, writing
//     a batch then reading its replies with ReadMessage (gorilla.go):
//     gorilla-batch (the batch's frames in one write), gorilla-frame (a
//     write per frame), gorilla-nodelay-off (batch, Nagle on),
//     gorilla-quickack (batch, TCP_QUICKACK after every read),
//     gorilla-smallbuf (batch, 8 KiB SO_RCVBUF and SO_SNDBUF, set before
//     connect; the kernel doubles them).
//
// Runs go in -reps rounds; each round runs every selected client once,
// and the order rotates by one each round so that no client always runs
// first. Each run prints a line as it ends; then a markdown table gives
// each client's mean over its runs, its messages per server CPU-second
// relative to the ceiling row, and the spread (min-max) of that figure.
// A row is flagged client-capped when its client used >= 0.9 cores while
// the server's CPU was busy < 0.9 of the time: the client, not the
// server, set the pace, so the server's cost is that of a server with
// idle time. A row is flagged contended when the server's threads
// waited more than 0.1 s/s for their CPU: something else ran there, and
// its time is in the CPU-busy basis. A client that reported any error
// (its exit status, its result document, the gorilla role's "errors"
// line) marks its row INVALID.
//
// # Running it
//
//	make bench-clients
//	go run ./benchmark/clientcost -reps 3 -duration 3s -warmup 1s
//	go run ./benchmark/clientcost -clients ceiling,gorilla-batch,gorilla-frame -json out/clientcost.json
//
// Flags: -refserver, -ceiling, -node-gen (paths), -reps (3), -duration
// (the window, 3s), -warmup (1s), -conns (16), -batch (10), -size (256),
// -clients (a comma list, default all), -json PATH (every run and the
// table as JSON).
package main
