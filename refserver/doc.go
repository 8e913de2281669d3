// Package refserver is the bundled WebSocket server under test: a small,
// real gorilla/websocket server that every make target measures by default.
//
// Endpoints (see docs/refserver.md for the full contract):
//
//	GET  /echo                       every message back with the same opcode
//	GET  /app/{key}?protocol=7       Pusher Channels protocol 7, public channels
//	GET  /rooms                      collaborative rooms: patches, acks, presence (docs/rooms.md)
//	POST /apps/{id}/events           signed REST publish (package pusher)
//	POST /apps/{id}/batch_events     up to Config.MaxBatch events per request
//	GET  /health                     process CPU, RSS, goroutines and counters
//	GET  /metrics                    the same counters, Prometheus text format 0.0.4
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
//   - /rooms sockets reuse the Pusher writer (one goroutine, bounded queue,
//     one writev per wake-up) with their own bound, Config.RoomsSendQueue;
//     a full queue closes that member with 1008. A patch is versioned, its
//     op encoded once into a frame, queued to every other member, acked to
//     the sender and kept in the room's ring, all under the room's lock,
//     so every member sees versions in one order and the lock is held for
//     appends only (queueing never blocks). Presence is coalesced: a
//     room's beat timer runs only while some presence waits, and a beat
//     encodes one frame shared by every member that did not move plus one
//     per member that did (its list less itself), at most 61 frames
//     however big the room. A room lives while it has members: the last one
//     out, cleanly or not, drops it with its ring and timer.
//   - Each /rooms connection has a token bucket (Config.RoomsRateLimit);
//     a patch over it gets error 429 and is not applied.
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
