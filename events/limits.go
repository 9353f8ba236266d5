package events

// MaxPayload is the largest NATS message Flotilla's servers accept, in
// bytes (nats-server's max_payload): the embedded server of `flotilla up`
// is started with it, deploy/kubernetes/nats-config.yaml sets the same
// 8MB, and policyd/validation refuses an object whose JSON is larger
// than this less 1 MiB (the room its binding and placement need), so
// that an object too large to travel is refused with its file and line
// before anything is published rather than by the broker afterwards.
const MaxPayload = 8 << 20
