package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
)

// Data written before bindings carried acceptedAt and warnings: an
// object.accepted and a binding of the same generation. The record keeps
// what object.accepted said.
func TestABindingOfTheSameGenerationKeepsTheAcceptedRecordsWarnings(t *testing.T) {
	rec := events.ObjectRecord{Key: myApp, APIVersion: "apps/v1", Generation: 1, Object: []byte(`{"kind":"Deployment"}`), Warnings: []string{"spec.x: deprecated"}, Role: events.RoleTemplate, UpdatedAt: t0}
	acc, _ := events.New(events.TypeObjectAccepted, "/policyd/0", "x", rec)
	bnd, _ := events.New(events.TypeBindingChanged, "/policyd/0", "x", events.Binding{Key: myApp, APIVersion: "apps/v1", Generation: 1, Revision: 1, Template: rec.Object})
	p := NewPublished()
	p.Apply(acc)
	p.Apply(bnd)
	if got := p.Records[myApp]; len(got.Warnings) != 1 || !got.UpdatedAt.Equal(t0) || !p.Live[myApp] {
		t.Fatalf("record: %+v (live %v)", got, p.Live[myApp])
	}
}

// The two subject sets are read apart; the fold puts them back in stream
// order, so what happened last wins.
func TestFoldPublishedFoldsInStreamOrder(t *testing.T) {
	r := &recorder{t: t}
	policy := r.stored(events.TypeObjectAccepted, events.ObjectRecord{Key: myPolicy, Generation: 1, Role: events.RolePolicy})
	binding := r.stored(events.TypeBindingChanged, events.Binding{Key: myApp, APIVersion: "apps/v1", Generation: 1, Revision: 1,
		Policy: &events.PolicyRef{Kind: "PropagationPolicy", Namespace: "default", Name: "my-app-policy"}})
	removed := r.stored(events.TypeObjectRemoved, events.ObjectRecord{Key: myApp})
	// Read as the edge reads them: objects first, then bindings.
	p := FoldPublished([]Stored{policy, removed, binding})
	var got []events.ObjectKey
	for _, rec := range p.SortedRecords() {
		got = append(got, rec.Key)
	}
	if diff := cmp.Diff([]events.ObjectKey{myPolicy}, got); diff != "" {
		t.Errorf("records after the template's removal (-want +got):\n%s", diff)
	}
	if ref, rev := p.ClaimingPolicy(myApp); ref == nil || rev != 1 {
		t.Errorf("the binding's policy, which exists: got %v revision %d", ref, rev)
	}
	p = FoldPublished([]Stored{binding})
	if ref, rev := p.ClaimingPolicy(myApp); ref != nil || rev != 1 {
		t.Errorf("a deleted policy claims nothing but the revision stays: got %v revision %d", ref, rev)
	}
}
