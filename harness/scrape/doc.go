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
package scrape
