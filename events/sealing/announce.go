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
