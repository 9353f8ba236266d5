package readmodel

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
)

func TestResolve(t *testing.T) {
	widget := events.ObjectKey{Group: "example.com", Kind: "Deployment", Namespace: "default", Name: "my-app"}
	ns := events.ObjectKey{Kind: "Namespace", Name: "prod"}
	keys := []events.ObjectKey{myApp, mySvc, myPolicy, ns}
	for _, tt := range []struct {
		name      string
		ref       string
		namespace string
		keys      []events.ObjectKey
		want      events.ObjectKey
		wantErr   string
	}{
		{"a kind names its object", "Deployment/my-app", "default", keys, myApp, ""},
		{"a plural names its kind", "deployments/my-app", "default", keys, myApp, ""},
		{"a short name names its kind", "deploy/my-app", "default", keys, myApp, ""},
		{"a short name names policies too", "pp/my-app-policy", "default", keys, myPolicy, ""},
		{"a group narrows the kind", "deployments.apps/my-app", "default", []events.ObjectKey{widget, myApp}, myApp, ""},
		{"core is the empty group", "svc.core/my-app", "default", keys, mySvc, ""},
		{"a cluster-scoped object is found from any namespace", "ns/prod", "other", keys, ns, ""},
		{"a bare name of one object names it", "my-app-policy", "default", keys, myPolicy, ""},
		{"an object in another namespace is not found", "deploy/my-app", "other", keys, events.ObjectKey{}, "not found"},
		{"a bare name two kinds share is ambiguous", "my-app", "default", keys, events.ObjectKey{},
			"my-app names 2 templates: say which, e.g. deployment/my-app or service/my-app"},
		{"a kind two groups define is ambiguous and the candidates name their groups", "deploy/my-app", "default", []events.ObjectKey{widget, myApp}, events.ObjectKey{},
			"deploy/my-app names 2 templates: say which, e.g. deployment.example.com/my-app or deployment.apps/my-app"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(tt.ref, tt.namespace, tt.keys, func(k events.ObjectKey) events.ObjectKey { return k }, "templates")
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("key (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveObjectWantsKindAndName(t *testing.T) {
	r := &recorder{t: t}
	p := FoldPublished([]Stored{r.stored(events.TypeObjectAccepted, events.ObjectRecord{Key: myPolicy, Generation: 1, Role: events.RolePolicy})})
	if _, err := ResolveObject(p, "my-app-policy", "default"); err == nil || err.Error() != `"my-app-policy": want KIND/NAME, e.g. deployment/my-app` {
		t.Errorf("a bare name: got %v", err)
	}
	if _, err := ResolveObject(p, "pp/nope", "default"); err == nil || err.Error() != "pp/nope not found in namespace default" {
		t.Errorf("a missing object: got %v", err)
	}
	got, err := ResolveObject(p, "propagationpolicy/my-app-policy", "default")
	if err != nil || got.Key != myPolicy {
		t.Errorf("got %v, %v; want %v", got.Key, err, myPolicy)
	}
	var amb *AmbiguousError
	if errors.As(err, &amb) {
		t.Errorf("one match is not ambiguous: %v", err)
	}
}
