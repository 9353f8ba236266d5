package readmodel

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
)

func TestParseArgsReadsKubectlsForms(t *testing.T) {
	widget := events.ObjectKey{Group: "example.com", Kind: "Widget", Namespace: "default", Name: "w"}
	known := []events.ObjectKey{myApp, mySvc, widget}
	res := func(v View, kind, word string) Resource { return Resource{View: v, Kind: kind, Word: word} }
	for _, tt := range []struct {
		name    string
		args    []string
		bare    bool
		want    []Target
		wantErr string
	}{
		{"a type lists every object of it", []string{"clusters"}, false, []Target{{Resource: res(ViewClusters, "", "clusters")}}, ""},
		{"a singular names the same type", []string{"cluster", "cluster1"}, false, []Target{{Resource: res(ViewClusters, "", "cluster"), Names: []string{"cluster1"}}}, ""},
		{"TYPE/NAME names one object each", []string{"cluster/cluster1", "deploy/my-app"}, false,
			[]Target{{Resource: res(ViewClusters, "", "cluster"), Names: []string{"cluster1"}}, {Resource: res(ViewTemplates, "deploy", "deploy"), Names: []string{"my-app"}}}, ""},
		{"TYPE1,TYPE2 lists both", []string{"deployments,services"}, false,
			[]Target{{Resource: res(ViewTemplates, "deployments", "deployments")}, {Resource: res(ViewTemplates, "services", "services")}}, ""},
		{"TYPE1,TYPE2 NAME names the name of each", []string{"deploy,svc", "my-app"}, false,
			[]Target{{Resource: res(ViewTemplates, "deploy", "deploy"), Names: []string{"my-app"}}, {Resource: res(ViewTemplates, "svc", "svc"), Names: []string{"my-app"}}}, ""},
		{"pp is PropagationPolicy alone", []string{"pp"}, false, []Target{{Resource: res(ViewPolicies, "pp", "pp")}}, ""},
		{"cop is ClusterOverridePolicy alone", []string{"cop"}, false, []Target{{Resource: Resource{View: ViewPolicies, Kind: "cop", Word: "cop", ClusterScoped: true}}}, ""},
		{"frq is FederatedResourceQuota", []string{"frq"}, false, []Target{{Resource: res(ViewQuotas, "", "frq")}}, ""},
		{"policies are every policy kind", []string{"policies"}, false, []Target{{Resource: res(ViewPolicies, "", "policies")}}, ""},
		{"work and placements are Flotilla's types", []string{"work,placements", "my-app"}, false,
			[]Target{{Resource: res(ViewWork, "", "work"), Names: []string{"my-app"}}, {Resource: res(ViewPlacements, "", "placements"), Names: []string{"my-app"}}}, ""},
		{"bindings are placements, as Karmada's ResourceBindings hold both", []string{"bindings"}, false, []Target{{Resource: res(ViewPlacements, "", "bindings")}}, ""},
		{"an accepted template's kind is a type", []string{"widgets"}, false, []Target{{Resource: res(ViewTemplates, "widgets", "widgets")}}, ""},
		{"a built-in kind with no template is a type", []string{"cronjobs"}, false, []Target{{Resource: res(ViewTemplates, "cronjobs", "cronjobs")}}, ""},
		{"a bare name is a template of any kind where allowed", []string{"my-app"}, true, []Target{{Resource: Resource{View: ViewTemplates}, Names: []string{"my-app"}}}, ""},
		{"a bare name is an unknown type elsewhere", []string{"my-app"}, false, nil,
			`the server doesn't have a resource type "my-app": want clusters, policies (pp, cpp, op, cop), federatedresourcequotas (frq), templates, a kind of template (deployments, services, ...), work, placements or deadletters`},
		{"TYPE/NAME and TYPE NAME do not mix", []string{"deploy/my-app", "svc"}, false, nil,
			`"svc": want TYPE/NAME (e.g. deployment/my-app); TYPE/NAME and TYPE NAME cannot be mixed`},
		{"no argument names no type", nil, false, nil,
			"you must specify the type of resource: clusters, policies, templates, a kind, work, placements or deadletters"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseArgs(tt.args, known, tt.bare)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("targets (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveRecordsIsAmbiguousOnlyWithoutAKind(t *testing.T) {
	r := &recorder{t: t}
	p := FoldPublished([]Stored{
		r.stored(events.TypeObjectAccepted, events.ObjectRecord{Key: myApp, Generation: 1, Role: events.RoleTemplate}),
		r.stored(events.TypeObjectAccepted, events.ObjectRecord{Key: mySvc, Generation: 1, Role: events.RoleTemplate}),
		r.stored(events.TypeObjectAccepted, events.ObjectRecord{Key: myPolicy, Generation: 1, Role: events.RolePolicy}),
	})
	for _, tt := range []struct {
		name    string
		args    []string
		want    []events.ObjectKey
		wantErr string
	}{
		{"a kind and a shared name name one template", []string{"deploy", "my-app"}, []events.ObjectKey{myApp}, ""},
		{"two kinds and a shared name name both", []string{"deploy,svc", "my-app"}, []events.ObjectKey{myApp, mySvc}, ""},
		{"a shared name without a kind is ambiguous", []string{"my-app"}, nil, "my-app names 2 templates: say which, e.g. deployment/my-app or service/my-app"},
		{"a policy by its short name", []string{"pp/my-app-policy"}, []events.ObjectKey{myPolicy}, ""},
		{"a missing name says so", []string{"svc", "nope"}, nil, "svc/nope not found in namespace default"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			targets, err := ParseArgs(tt.args, Known(p), true)
			if err != nil {
				t.Fatal(err)
			}
			var got []events.ObjectKey
			gotErr := ""
			for _, target := range targets {
				rs, err := ResolveRecords(p, target, "default", false)
				if err != nil {
					gotErr = err.Error()
				}
				for _, r := range rs {
					got = append(got, r.Key)
				}
			}
			if diff := cmp.Diff(tt.wantErr, gotErr); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("keys (-want +got):\n%s", diff)
			}
		})
	}
}
