// Package mirror is hubd's pure core: what a hub object becomes on the bus
// (Input: the object `flotilla apply` would publish for it, or why it is
// no template) and what the bus's read model becomes on the hub (the
// aggregated status of a template, its ResourceBinding, a Cluster's
// status). It does no I/O: hubd reads the hub and the bus and calls it.
package mirror
