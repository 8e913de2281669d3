// Package scrape reads what a server under test publishes about itself
// over a point's window: its metrics endpoint (Prometheus text or any JSON
// document of numbers), read once before the window and once after and
// diffed into the point's server_metrics, and its profile, fetched over
// the window and saved whole.
//
// Every read is bounded (body size, series kept, time) and goes through
// one client that follows no redirect and uses no proxy: the server is on
// loopback, and a 3xx is an error that names it, never a hop to another
// address. A failed read is recorded on the point and never fails it; a
// URL is only ever shown with its query masked (target.SafeURL).
//
// A Window is both around one point: StartWindow, as the harness starts
// its CPU samplers, sends the before read and starts the profile fetch;
// WindowEnded sends the after read (once the before read is in: the two
// never overlap); Finish waits for them and returns what they found
// (Captured), the fields of the point's outcome. Every request runs in
// its own goroutine, so a slow endpoint delays neither the sampling nor
// the window's end. A WindowSpec is all a Window knows of its point: the
// target's metrics and profile, the addresses, the generator's marker
// (whose time opens the window, so the count check knows how much of it
// the two reads cover) and the window's length.
package scrape
