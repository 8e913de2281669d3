package result

// MetricsSpec is a target's "metrics": where the server publishes its
// figures. URL takes the placeholders of the other fields (Expand).
type MetricsSpec struct {
	URL    string `json:"url"`
	Format string `json:"format,omitempty"` // prometheus (default) | json
	// Counts names, for a scenario, the server's counter that counts what
	// the generator's throughput counts (echo: the messages it wrote
	// back); each point's figure is checked against it (CountCheck).
	Counts map[string]string `json:"counts,omitempty"`
}

// ServerMetrics is what the server's own metrics said over a point's
// measured window.
type ServerMetrics struct {
	Format string `json:"format"`
	// IntervalS is the time between the two reads' responses, the
	// denominator of every rate; 0 unless both reads succeeded.
	IntervalS float64 `json:"interval_s"`
	// Series are sorted by name, at most MaxMetricSeries of them;
	// DroppedSeries says how many more there were (the last by name).
	Series        []MetricSeries `json:"series"`
	DroppedSeries int            `json:"dropped_series"`
	// Error says why a read failed (either or both); the point itself
	// is not failed by it. The series of a read that worked are kept.
	Error string `json:"error,omitempty"`
}

// MetricSeries is one numeric series read before and after the window.
// Before or After is null when that read did not have it (or failed, or it
// was not a finite number); Delta and RatePerS need both.
type MetricSeries struct {
	// Name is the metric name with its labels in Prometheus's form,
	// name{a="x", b="y"}; a histogram or summary gives name_sum and
	// name_count. For JSON it is the leaf's dotted path (stats.conns).
	Name   string   `json:"name"`
	Type   string   `json:"type"` // counter | gauge | untyped (every JSON leaf)
	Before *float64 `json:"before"`
	After  *float64 `json:"after"`
	Delta  *float64 `json:"delta,omitempty"` // after - before
	// RatePerS is Delta / IntervalS, for counters only.
	RatePerS *float64 `json:"rate_per_s,omitempty"`
	// Reset: a counter went down (the server restarted it during the
	// window), so it has no rate.
	Reset bool `json:"reset,omitempty"`
}
