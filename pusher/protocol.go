package pusher

import "encoding/json"

// ProtocolVersion is the client protocol this package speaks (?protocol=7).
const ProtocolVersion = 7

// Event names on the WebSocket.
const (
	EventConnectionEstablished = "pusher:connection_established"
	EventSubscribe             = "pusher:subscribe"
	EventUnsubscribe           = "pusher:unsubscribe"
	EventSubscriptionSucceeded = "pusher_internal:subscription_succeeded"
	EventPing                  = "pusher:ping"
	EventPong                  = "pusher:pong"
	EventError                 = "pusher:error"
)

// Message is one frame on the WebSocket, either way. Data stays raw because
// its type depends on Event: a JSON string for application events and
// connection_established, an object for subscribe and error.
type Message struct {
	Event   string          `json:"event"`
	Channel string          `json:"channel,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// ConnectionEstablishedData is what connection_established's data string
// holds once decoded.
type ConnectionEstablishedData struct {
	SocketID        string `json:"socket_id"`
	ActivityTimeout int    `json:"activity_timeout"` // seconds
}

// SubscribeData is the data object of pusher:subscribe and
// pusher:unsubscribe. Auth and ChannelData are for private and presence
// channels, which this subset does not serve.
type SubscribeData struct {
	Channel     string `json:"channel"`
	Auth        string `json:"auth,omitempty"`
	ChannelData string `json:"channel_data,omitempty"`
}

// ErrorData is the data object of pusher:error. Code is null for errors
// that leave the socket open (as Pusher does); a 4xxx code comes with a
// close using the same code.
type ErrorData struct {
	Message string `json:"message"`
	Code    *int   `json:"code"`
}

// Pusher error codes (pusher:error data.code, also used as close codes) and
// the standard WebSocket close codes the server uses.
const (
	CodeAppNotFound          = 4001 // unknown app key: error, then close
	CodePathNotFound         = 4005
	CodeInvalidVersionFormat = 4006
	CodeUnsupportedProtocol  = 4007
	CodeNoProtocolVersion    = 4008
	CodeOverCapacity         = 4100 // slow consumer: send queue full, socket closed
	CodeGenericReconnect     = 4200
	CodePongNotReceived      = 4201
	CodeClosedAfterInactive  = 4202
	// The 4300-4399 range is Pusher's "other errors": reported with
	// pusher:error, the connection stays open (4301 is its client-event
	// rate limit). Pusher defines no code for a per-connection
	// subscription limit; refserver answers a subscribe past its limit
	// with this one, from that range.
	CodeSubscriptionLimit = 4300

	CloseMessageTooBig  = 1009 // frame over the size limit
	CloseServiceRestart = 1012 // server shutting down
)

// Paths of the REST endpoints and the WebSocket endpoint.
func EventsPath(appID string) string      { return "/apps/" + appID + "/events" }
func BatchEventsPath(appID string) string { return "/apps/" + appID + "/batch_events" }
func AppPath(key string) string           { return "/app/" + key }
