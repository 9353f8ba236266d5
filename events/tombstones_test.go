package events

import "testing"

func TestTombstonesTellAStaleRegistrationFromANewOne(t *testing.T) {
	var ts Tombstones
	if ts.Stale("c1", 0) || ts.Stale("c1", 5) {
		t.Fatal("without a deregistration nothing is stale")
	}
	ts.Bury("c1", 3)
	for gen, stale := range map[int64]bool{1: true, 2: true, 3: true, 4: false} {
		if ts.Stale("c1", gen) != stale {
			t.Errorf("registration at %d after a deregistration at 3: stale %v, want %v", gen, !stale, stale)
		}
	}
	if ts.Stale("c2", 1) {
		t.Error("another cluster's deregistration buries nothing here")
	}
	ts.Bury("c1", 2) // an older deregistration redelivered
	if ts.Generation("c1") != 3 {
		t.Errorf("a tombstone only moves forward: %d", ts.Generation("c1"))
	}
	ts.Bury("c3", 0) // written before generations were set
	if !ts.Stale("c3", 0) || ts.Stale("c3", 1) {
		t.Error("a generation-less deregistration only buries generation-less registrations")
	}
	if !Outdated(2, 3) || Outdated(3, 3) || Outdated(0, 9) {
		t.Error("a deregistration is outdated only by a newer registration, and never without a generation")
	}
}
