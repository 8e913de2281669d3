package refserver

import (
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/nats-io/nats.go"
)

// A cluster of refserver nodes shares its events over NATS core, as a
// clustered Pusher server shares them over Redis or its own mesh (seed
// 003's "Testing several nodes"): each node publishes every event its
// REST API accepted on ClusterSubject, after delivering it to its own
// subscribers, and delivers every event it receives there to its own. A
// node does not receive its own relays (NoEcho), so each subscriber gets
// an event once. Delivery across nodes is at most once: NATS core keeps
// no event for a node that was away. Connections, subscriptions and
// presence stay per node; socket_id exclusion applies on the node that
// took the request (socket ids are unique per node).

// ClusterSubject is the NATS subject a cluster's events cross on.
const ClusterSubject = "refserver.events"

// relayEvent is one event on ClusterSubject: the name and data as the
// literals the publisher sent, and every channel it targets.
type relayEvent struct {
	Name     json.RawMessage `json:"n"`
	Data     json.RawMessage `json:"d,omitempty"`
	Channels []string        `json:"c"`
	SocketID string          `json:"s,omitempty"`
}

// CheckClusterURL accepts a cluster URL: nats://HOST:PORT (or tls://).
func CheckClusterURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "nats" && u.Scheme != "tls") || u.Host == "" {
		return fmt.Errorf("Cluster: %q is not a nats://HOST:PORT URL", s)
	}
	return nil
}

// clusterJoinWait is how long a node keeps trying to reach the cluster's
// NATS server when it starts: a cluster's servers boot together, and the
// bus may come up after a node.
const clusterJoinWait = 5 * time.Second

// joinCluster connects to the cluster's NATS server (trying again every
// 100 ms for clusterJoinWait) and starts delivering the other nodes'
// events.
func (s *Server) joinCluster() error {
	var nc *nats.Conn
	var err error
	for deadline := time.Now().Add(clusterJoinWait); ; time.Sleep(100 * time.Millisecond) {
		nc, err = nats.Connect(s.cfg.Cluster,
			nats.Name("refserver"), nats.NoEcho(), nats.Timeout(5*time.Second),
			nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("cluster %s: %w (tried for %v)", s.cfg.Cluster, err, clusterJoinWait)
	}
	if _, err := nc.Subscribe(ClusterSubject, func(m *nats.Msg) { s.receiveRelay(m.Data) }); err != nil {
		nc.Close()
		return fmt.Errorf("cluster %s: subscribe %s: %w", s.cfg.Cluster, ClusterSubject, err)
	}
	// The subscription is on the server once Flush returns: an event
	// published to another node after New returned reaches this one.
	if err := nc.Flush(); err != nil {
		nc.Close()
		return fmt.Errorf("cluster %s: %w", s.cfg.Cluster, err)
	}
	s.cluster = nc
	return nil
}

// clusterFlushTimeout bounds the wait for the bus to take a relay.
const clusterFlushTimeout = 2 * time.Second

// relay publishes events to the other nodes, and waits until the NATS
// server has them.
func (s *Server) relay(events []rawEvent) {
	out := make([]relayEvent, len(events))
	for i := range events {
		ev := &events[i]
		out[i] = relayEvent{Name: ev.nameLit, Data: ev.dataLit, Channels: ev.targets(), SocketID: ev.socketID}
	}
	b, err := json.Marshal(out)
	if err == nil {
		err = s.cluster.Publish(ClusterSubject, b)
	}
	if err == nil {
		// The request is answered once the bus has the relay (one round
		// trip): a node killed after answering 200 has relayed it.
		err = s.cluster.FlushTimeout(clusterFlushTimeout)
	}
	if err != nil {
		s.stats.clusterErrors.Add(1)
		return
	}
	s.stats.clusterSent.Add(uint64(len(events)))
	if d := s.cfg.ClusterDelay; d > 0 {
		time.Sleep(d) // the request waits, as for a bus's round trip
	}
}

// receiveRelay delivers another node's events to this node's
// subscribers. A message that does not decode is counted and dropped.
func (s *Server) receiveRelay(b []byte) {
	var in []relayEvent
	if err := json.Unmarshal(b, &in); err != nil {
		s.stats.clusterErrors.Add(1)
		return
	}
	events := make([]rawEvent, 0, len(in))
	for _, r := range in {
		if len(r.Name) == 0 || len(r.Channels) == 0 {
			s.stats.clusterErrors.Add(1)
			continue
		}
		events = append(events, rawEvent{nameLit: r.Name, dataLit: r.Data, channels: r.Channels, socketID: r.SocketID})
	}
	s.stats.clusterReceived.Add(uint64(len(events)))
	s.deliver(events)
}
