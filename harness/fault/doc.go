// Package fault holds FAULT's rules: which sweeps may take a resilience
// point, which server each of the scenario's URLs is on, and the point's
// verdict. It is the pure half of FAULT; the harness keeps the other
// half, the one that touches processes (the signal sent at its instant,
// the frozen server continued, each server probed after the window).
//
// FAULT=KIND:SERVER@FRACTION (knob.Fault) adds one resilience point to a
// sweep, at the headline's rung: the named server of a multi-server
// target is sent SIGKILL (kill) or SIGSTOP (stop) at FRACTION of the
// measured window, timed from the generator's marker, while the generator
// splits each server's delivery accounting at the same fraction (the
// scenario's load.FaultDef, Def: fanout's --split-at). The faulted
// server's exit does not end the window nor fail the point; the others'
// does.
//
// # Before anything boots
//
// Check refuses a FAULT the sweep cannot take, naming why (exit 2): a
// scenario without a FaultDef (it could not say what each server
// delivered before and after), a target that boots fewer than two
// servers, a server the target does not have, a two-arm sweep, agents
// (each would split its own accounting on its own clock), --url (the
// target's own URLs say which server each client is on).
//
// # Which server a client is on
//
// The generator reports each of the scenario's URLs' share (in the target
// block's order), not each server's. Cluster joins them: a URL is owned by
// the one booted server that names the URL's port ({portN}, {port},
// {addr}) in its ready probe or, failing that, in its command or env;
// where none or several do, the URL is owned by none (-1), and its share
// is left unjoined rather than given to a guess. The per-server CPU of a
// multi-server point names each server's URL the same way (Served).
//
// # The verdict
//
// Judge makes a resilience point never clean (its errors are the fault's)
// and judges it on its record (result.Fault.Judge: held, degraded or
// cannot_conclude); a point without a record cannot conclude.
//
// # Purity
//
// The package reads the knobs, the target and the scenario registry, and
// nothing else: it starts no process, sends no signal, reads no clock and
// does no I/O (TestFaultIsPure).
package fault
