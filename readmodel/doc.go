// Package readmodel computes what Flotilla shows its users from the events
// recorded on the streams: templates and their policies, clusters with their
// health and capacity, placements, and the work in every member with its
// phase. `flotilla get`, `describe`, `explain` and `watch` print what it
// computes, and policyd rebuilds its accepted state from Published at
// start-up.
//
// It is pure: it reads no bus. Its callers read the streams (through
// events/natsbus), hand the stored events over as Stored values, and get
// views back. Each rule lives here once: where a template's current record
// lives (Published), which phase a work is in (Work, WorkPhase), and which
// object a KIND/NAME names (Resolve).
package readmodel
