package events

// Tombstones remember, per deleted cluster, the generation its
// cluster.deregistered carried (the last registration's plus one), so that
// a consumer can tell a registration redelivered from before the deletion
// (at or below it: stale) from the cluster applied again (above it). The
// zero value is ready to use; not safe for concurrent use.
type Tombstones struct {
	gen map[string]int64
}

// Bury records a deregistration of name at generation gen.
func (t *Tombstones) Bury(name string, gen int64) {
	if t.gen == nil {
		t.gen = map[string]int64{}
	}
	if g, ok := t.gen[name]; !ok || gen > g {
		t.gen[name] = gen
	}
}

// Stale reports whether a registration of name at generation gen is older
// than the cluster's deregistration. Without a deregistration nothing is
// stale.
func (t *Tombstones) Stale(name string, gen int64) bool {
	g, ok := t.gen[name]
	return ok && gen <= g
}

// Generation is the generation of name's deregistration (0: none).
func (t *Tombstones) Generation(name string) int64 { return t.gen[name] }

// Outdated reports whether a deregistration at generation gen is older than
// a registration held at generation held: the cluster was applied again
// after it, and the deregistration must change nothing. A deregistration
// without a generation (written before generations were set) is never
// outdated.
func Outdated(gen, held int64) bool { return gen > 0 && held > gen }
