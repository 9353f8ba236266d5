package sealing

import (
	"context"

	"github.com/flotilla-io/flotilla/events"
)

// Announce publishes the public half of k (io.flotilla.sealkey.published.v1)
// so the CLI can seal credentials to it. The event id derives from the key,
// so every daemon holding the same key announces it once.
func Announce(ctx context.Context, pub events.Publisher, k *Key, source string) error {
	e, err := events.NewWithID(events.DeterministicID("sealkey", k.ID), events.TypeSealKeyPublished, source, "sealkey",
		events.SealKey{KeyID: k.ID, PublicKey: k.Public[:]})
	if err != nil {
		return err
	}
	return pub.Publish(ctx, events.SealKeySubject, e)
}

// Announced is the public key an announcement carries, for sealing to it
// (the CLI's apply and join, hubd); ok is false for a malformed one.
func Announced(k events.SealKey) (key *Key, ok bool) {
	if len(k.PublicKey) != 32 {
		return nil, false
	}
	var pub [32]byte
	copy(pub[:], k.PublicKey)
	return &Key{ID: k.KeyID, Public: &pub}, true
}
