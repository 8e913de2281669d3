package refserver

import (
	"runtime"
	"sync/atomic"
	"time"
)

// counters are bumped on the hot paths; atomics, no locks.
type counters struct {
	connections      atomic.Int64
	connectionsTotal atomic.Uint64
	messagesIn       atomic.Uint64
	messagesOut      atomic.Uint64
	eventsPublished  atomic.Uint64
	deliveries       atomic.Uint64
	// A cluster node's relays (cluster.go): events sent to and received
	// from the other nodes, and relays that failed or did not decode.
	clusterSent, clusterReceived, clusterErrors atomic.Uint64
	restRequests                                atomic.Uint64
	restErrors                                  atomic.Uint64
	slowConsumerCloses                          atomic.Uint64
	oversizeCloses                              atomic.Uint64
	invalidUTF8Closes                           atomic.Uint64
	restBusy                                    atomic.Uint64
	dropped                                     atomic.Uint64
	roomOps                                     atomic.Uint64 // patches accepted on /rooms
	rateLimited                                 atomic.Uint64 // /rooms messages refused with 429
}

// Stats is the /health document: process resources from the OS and the
// server's own counters since start. Counters only grow; connections,
// channels and subscriptions are current values.
type Stats struct {
	CPUSeconds       float64 `json:"cpu_seconds"` // user + system, getrusage(RUSAGE_SELF)
	CPUUserSeconds   float64 `json:"cpu_user_seconds"`
	CPUSystemSeconds float64 `json:"cpu_system_seconds"`
	RSSBytes         uint64  `json:"rss_bytes"` // resident now (/proc/self/statm); 0 where unavailable (max_rss_bytes is the peak, not a stand-in)
	MaxRSSBytes      uint64  `json:"max_rss_bytes"`
	Goroutines       int     `json:"goroutines"`
	GOMAXPROCS       int     `json:"gomaxprocs"`
	UptimeSeconds    float64 `json:"uptime_seconds"`

	Connections      int64  `json:"connections"` // open WebSockets, /echo, /app and /rooms together
	ConnectionsTotal uint64 `json:"connections_total"`
	Channels         int    `json:"channels"`      // channels with at least one subscriber
	Subscriptions    int    `json:"subscriptions"` // (socket, channel) pairs

	MessagesIn      uint64 `json:"messages_in"`      // WebSocket data messages received
	MessagesOut     uint64 `json:"messages_out"`     // WebSocket frames written (echoes, events, replies)
	EventsPublished uint64 `json:"events_published"` // events accepted over REST
	Deliveries      uint64 `json:"deliveries"`       // event frames queued to subscribers

	RESTRequests       uint64 `json:"rest_requests"`
	RESTErrors         uint64 `json:"rest_errors"`              // answered 4xx or 503
	RESTBusy           uint64 `json:"rest_busy"`                // answered 503: the in-flight body budget was full
	RESTInflightBytes  int64  `json:"rest_inflight_body_bytes"` // body bytes reserved by REST requests now
	SlowConsumerCloses uint64 `json:"slow_consumer_closes"`     // closed 4100 (/app) or 1008 (/rooms): send queue full
	OversizeCloses     uint64 `json:"oversize_closes"`          // closed 1009: message over the limit
	InvalidUTF8Closes  uint64 `json:"invalid_utf8_closes"`      // closed 1007: a text message that is not UTF-8
	DroppedMessages    uint64 `json:"dropped_messages"`         // queued or offered to a socket that was closing

	Rooms       int   `json:"rooms"`        // live /rooms rooms (with at least one member)
	RoomMembers int64 `json:"room_members"` // connections joined to a room

	// A cluster node's relays (Config.Cluster): events sent to the other
	// nodes, received from them, and relays that failed or did not decode.
	ClusterSent     uint64 `json:"cluster_events_sent"`
	ClusterReceived uint64 `json:"cluster_events_received"`
	ClusterErrors   uint64 `json:"cluster_errors"`
}

// Stats reads the counters and the process's resource use.
func (s *Server) Stats() Stats {
	user, sys, maxRSS := rusage()
	channels, subs := s.hub.counts()
	rooms, members := s.rooms.counts()
	st := Stats{
		CPUSeconds:       user + sys,
		CPUUserSeconds:   user,
		CPUSystemSeconds: sys,
		RSSBytes:         currentRSS(),
		MaxRSSBytes:      maxRSS,
		Goroutines:       runtime.NumGoroutine(),
		GOMAXPROCS:       runtime.GOMAXPROCS(0),
		UptimeSeconds:    time.Since(s.started).Seconds(),

		Connections:      s.stats.connections.Load(),
		ConnectionsTotal: s.stats.connectionsTotal.Load(),
		Channels:         channels,
		Subscriptions:    subs,

		MessagesIn:      s.stats.messagesIn.Load(),
		MessagesOut:     s.stats.messagesOut.Load(),
		EventsPublished: s.stats.eventsPublished.Load(),
		Deliveries:      s.stats.deliveries.Load(),

		RESTRequests:       s.stats.restRequests.Load(),
		RESTErrors:         s.stats.restErrors.Load(),
		RESTBusy:           s.stats.restBusy.Load(),
		RESTInflightBytes:  s.bodies.inUse(),
		SlowConsumerCloses: s.stats.slowConsumerCloses.Load(),
		OversizeCloses:     s.stats.oversizeCloses.Load(),
		InvalidUTF8Closes:  s.stats.invalidUTF8Closes.Load(),
		DroppedMessages:    s.stats.dropped.Load(),

		ClusterSent:     s.stats.clusterSent.Load(),
		ClusterReceived: s.stats.clusterReceived.Load(),
		ClusterErrors:   s.stats.clusterErrors.Load(),

		Rooms:       rooms,
		RoomMembers: members,
	}
	return st
}
