package events

// Tombstones remember, per deleted object, the generation or revision its
// deletion carried: for a cluster, the generation of its
// cluster.deregistered (the last registration's plus one); for a template,
// the revision of its binding.removed. A consumer can so tell an event
// redelivered from before the deletion (at or below it: stale) from the
// object applied again (above it). The zero value is ready to use; not
// safe for concurrent use.
type Tombstones struct {
	gen map[string]int64
}

// Bury records the deletion of name at generation (or revision) gen.
func (t *Tombstones) Bury(name string, gen int64) {
	if t.gen == nil {
		t.gen = map[string]int64{}
	}
	if g, ok := t.gen[name]; !ok || gen > g {
		t.gen[name] = gen
	}
}

// Stale reports whether an event of name at generation (or revision) gen
// is from before its deletion. Without a deletion nothing is stale.
func (t *Tombstones) Stale(name string, gen int64) bool {
	g, ok := t.gen[name]
	return ok && gen <= g
}

// Generation is the generation of name's deletion (0: none).
func (t *Tombstones) Generation(name string) int64 { return t.gen[name] }

// Outdated reports whether a deregistration at generation gen is older than
// a registration held at generation held: the cluster was applied again
// after it, and the deregistration must change nothing. A deregistration
// without a generation (written before generations were set) is never
// outdated.
func Outdated(gen, held int64) bool { return gen > 0 && held > gen }
