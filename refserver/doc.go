// Package refserver is the bundled WebSocket server under test: a small,
// real gorilla/websocket server that every make target measures by default.
//
// Endpoints (see docs/refserver.md for the full contract):
//
//	GET  /echo                       every message back with the same opcode
//	GET  /app/{key}?protocol=7       Pusher Channels protocol 7, public channels
//	POST /apps/{id}/events           signed REST publish (package pusher)
//	POST /apps/{id}/batch_events     up to Config.MaxBatch events per request
//	GET  /health                     process CPU, RSS, goroutines and counters
//
// Design, since this is the thing being measured:
//
//   - Fan-out encodes each event once per channel into a complete
//     WebSocket frame (server frames are unmasked, so the bytes are the same
//     for every subscriber) and queues that one slice to each subscriber.
//   - Each Pusher socket has one writer goroutine that drains its queue
//     into a single writev, so a burst of events costs one syscall per
//     subscriber, not one per event. No goroutine per message.
//   - The queue is bounded (Config.SendQueue frames). A publish that finds
//     it full closes that socket with 4100 "over capacity" and counts a
//     slow-consumer close in /health: memory stays bounded and a publisher
//     never blocks on one slow client.
//   - /echo is a plain gorilla NextReader/NextWriter loop in one goroutine,
//     the conventional baseline.
//   - Bad input never takes the server down: oversized messages close that
//     socket with 1009, a text message that is not UTF-8 with 1007,
//     malformed client JSON gets pusher:error and the socket stays open, a
//     subscribe past Config.MaxSubscriptions gets pusher:error 4300, bad
//     REST requests get 400/401/404/413 with a message. Shutdown closes
//     every socket with 1012.
//   - A REST body costs nothing until its sender is known: the signature
//     covers body_md5, so it is checked on the query before the body is
//     read; an announced length over MaxBodyBytes is refused unread; and
//     every body reserves its size from one budget
//     (MaxInflightBodyBytes, 503 when full), so the memory held by bodies
//     in flight is bounded however many requests arrive.
package refserver
