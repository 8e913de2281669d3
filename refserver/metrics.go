package refserver

import (
	"net/http"
	"strconv"
)

// metricsContentType is the Prometheus text exposition format 0.0.4.
const metricsContentType = "text/plain; version=0.0.4; charset=utf-8"

// serveMetrics writes the counters of Stats in the Prometheus text format:
// the same atomics /health reads, written by hand (one sample per family,
// no labels), so the server needs no client library.
func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	st := s.Stats()
	b := make([]byte, 0, 4096)
	add := func(name, typ, help string, v float64) {
		b = append(b, "# HELP "...)
		b = append(b, name...)
		b = append(b, ' ')
		b = append(b, help...)
		b = append(b, "\n# TYPE "...)
		b = append(b, name...)
		b = append(b, ' ')
		b = append(b, typ...)
		b = append(b, '\n')
		b = append(b, name...)
		b = append(b, ' ')
		b = strconv.AppendFloat(b, v, 'g', -1, 64)
		b = append(b, '\n')
	}
	const gauge, counter = "gauge", "counter"
	add("refserver_connections", gauge, "Open WebSocket connections (/echo, /app and /rooms).", float64(st.Connections))
	add("refserver_connections_total", counter, "WebSocket connections accepted since start.", float64(st.ConnectionsTotal))
	add("refserver_rooms", gauge, "Live /rooms rooms (rooms with at least one member).", float64(st.Rooms))
	add("refserver_room_members", gauge, "Connections joined to a room.", float64(st.RoomMembers))
	add("refserver_messages_received_total", counter, "WebSocket data messages received, all endpoints.", float64(st.MessagesIn))
	add("refserver_messages_sent_total", counter, "WebSocket frames written, all endpoints.", float64(st.MessagesOut))
	add("refserver_room_ops_total", counter, "Patches accepted on /rooms (one version each).", float64(s.stats.roomOps.Load()))
	add("refserver_rate_limited_total", counter, "Messages on /rooms refused with 429 rate_limited.", float64(s.stats.rateLimited.Load()))
	add("refserver_slow_consumer_closes_total", counter, "Sockets closed because their send queue was full (4100 on /app, 1008 on /rooms).", float64(st.SlowConsumerCloses))
	add("refserver_dropped_messages_total", counter, "Frames discarded because their socket was closing.", float64(st.DroppedMessages))
	add("refserver_cluster_events_sent_total", counter, "Events relayed to the other cluster nodes (--cluster).", float64(st.ClusterSent))
	add("refserver_cluster_events_received_total", counter, "Events relayed by the other cluster nodes and delivered here.", float64(st.ClusterReceived))
	add("refserver_cluster_errors_total", counter, "Cluster relays that failed to send or did not decode.", float64(st.ClusterErrors))
	add("process_cpu_seconds_total", counter, "Total user and system CPU time spent in seconds.", st.CPUSeconds)
	add("process_resident_memory_bytes", gauge, "Resident memory size in bytes.", float64(st.RSSBytes))
	w.Header().Set("Content-Type", metricsContentType)
	w.Header().Set("Cache-Control", "no-store")
	w.Write(b)
}
