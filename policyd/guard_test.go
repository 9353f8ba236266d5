package policyd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
	"github.com/flotilla-io/flotilla/internal/observe"
)

// A policyd run with --max-replicas refuses a template above the limit on
// the bus, with the reason, and places the others as before.
func TestMaxReplicasRefusesALargerTemplateWithTheReason(t *testing.T) {
	_, bus := eventstest.Server(t)
	d, err := New(Config{Instance: "0", MaxReplicas: 100}, Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()

	big := strings.Replace(strings.Replace(deployment, "replicas: 6", "replicas: 2147483647", 1), "name: my-app,", "name: big,", 1)
	small := strings.Replace(deployment, "replicas: 6", "replicas: 100", 1)
	for _, doc := range []string{policyDoc("match-all", "", 0), big, small} {
		e := applied(t, doc)
		var obj struct {
			APIVersion, Kind string
			Metadata         struct{ Name, Namespace string }
		}
		if err := events.UnmarshalJSON(e.Data(), &obj); err != nil {
			t.Fatal(err)
		}
		key := events.KeyOf(obj.APIVersion, obj.Kind, obj.Metadata.Namespace, obj.Metadata.Name)
		if err := bus.Publish(ctx, events.InputSubject(key), e); err != nil {
			t.Fatal(err)
		}
	}

	bigKey := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "big"}
	var rejection events.Rejection
	var bound []events.Binding
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		rejected, err := bus.LatestPerSubject(ctx, events.StreamPolicy, events.AllRejected)
		if err != nil {
			t.Fatal(err)
		}
		bindings, err := bus.LatestPerSubject(ctx, events.StreamPolicy, events.AllBindings)
		if err != nil {
			t.Fatal(err)
		}
		if len(rejected) == 1 && len(bindings) == 1 {
			if err := events.Decode(rejected[0].Event, &rejection); err != nil {
				t.Fatal(err)
			}
			var b events.Binding
			if err := events.Decode(bindings[0].Event, &b); err != nil {
				t.Fatal(err)
			}
			bound = append(bound, b)
			break
		}
	}
	if len(bound) != 1 {
		t.Fatal("no rejection of the large template and binding of the small one within 10s")
	}
	if diff := cmp.Diff(bigKey, rejection.Key); diff != "" {
		t.Errorf("rejected key (-want +got):\n%s", diff)
	}
	if len(rejection.Problems) != 1 || rejection.Problems[0].Field != "spec.replicas" ||
		!strings.Contains(rejection.Problems[0].Reason, "2147483647: more than the 100 replicas this policyd accepts (--max-replicas)") {
		t.Errorf("rejection problems: %+v", rejection.Problems)
	}
	if b := bound[0]; b.Key.Name != "my-app" || b.Replicas != 100 {
		t.Errorf("the template at the limit is bound as %s with %d replicas, want my-app with 100", b.Key, b.Replicas)
	}
}

func TestANegativeMaxReplicasIsAConfigError(t *testing.T) {
	err := Config{Instance: "0", MaxReplicas: -1}.Validate()
	if err == nil || !strings.Contains(err.Error(), "maxReplicas") {
		t.Fatalf("Validate() = %v, want an error naming maxReplicas", err)
	}
}

// An object sent on another object's input subject is dead-lettered with
// the reason and never accepted: a publisher credential narrowed to one
// namespace is checked by NATS against the subject only, so the subject
// must name the object it carries.
func TestAnObjectOnAnotherObjectsSubjectIsDeadLetteredNotAccepted(t *testing.T) {
	_, bus := eventstest.Server(t)
	d, err := New(Config{Instance: "0"}, Deps{Bus: bus, Log: zap.NewNop(), Health: observe.NewHealth()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// my-app is in namespace default; team-a's subject carries it.
	teamA := events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "team-a", Name: "my-app"}
	if err := bus.Publish(ctx, events.InputSubject(teamA), applied(t, deployment)); err != nil {
		t.Fatal(err)
	}
	// A policy on its own subject afterwards: handled, so the one before was too.
	policy := applied(t, policyDoc("match-all", "", 0))
	policyKey := events.ObjectKey{Group: "policy.karmada.io", Kind: "PropagationPolicy", Namespace: "default", Name: "match-all"}
	if err := bus.Publish(ctx, events.InputSubject(policyKey), policy); err != nil {
		t.Fatal(err)
	}
	var letters []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && len(letters) == 0; time.Sleep(20 * time.Millisecond) {
		ms, err := bus.LatestPerSubject(ctx, events.StreamDeadLetter, events.AllDeadLetter)
		if err != nil && !strings.Contains(err.Error(), "not found") {
			t.Fatal(err)
		}
		for _, m := range ms {
			var dl events.DeadLetter
			if m.Err == nil && events.Decode(m.Event, &dl) == nil {
				letters = append(letters, dl.Reason)
			}
		}
	}
	if len(letters) != 1 || !strings.Contains(letters[0], "the object is default/Deployment.apps/my-app") || !strings.Contains(letters[0], "must travel on its own object's subject") {
		t.Fatalf("dead letters: %q, want one naming the object and the rule", letters)
	}
	records, err := bus.LatestPerSubject(ctx, events.StreamPolicy, events.AllObjects)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range records {
		if strings.Contains(m.Subject, "Deployment") {
			t.Errorf("the mismatched Deployment was accepted: %s", m.Subject)
		}
	}
}
