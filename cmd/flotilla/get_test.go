package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/readmodel"
)

func TestGetTables(t *testing.T) {
	fixClock(t)
	v := recordedViews(t)
	myApp := v.myApp
	for _, tt := range []struct {
		name  string
		print func(*bytes.Buffer) error
		want  string
	}{
		{"get work -A -o wide shows every phase, Unknown status and health for a lost cluster", func(b *bytes.Buffer) error {
			return getPrinted(b, v, "work", "-A", "-o", "wide")
		}, `NAMESPACE   NAME     CLUSTER    STATUS     AGE   KIND         READY   HEALTH    GENERATION   OVERRIDES            MESSAGE
default     my-app   cluster1   Running    3d    Deployment   4/4     Healthy   3            default/tag-images   
default     my-app   cluster2   Pending    2d    Deployment   0/2     -         3                                 
default     my-app   cluster3   Unknown    3d    Deployment   2/0     Unknown   3            default/tag-images   cluster Unreachable since 2026-11-28T10:00:00Z; last reported Evicted
default     my-app   cluster2   Deleting   3d    Service      -       Healthy   3            default/tag-images   
shop        web      cluster1   Deleting   3d    Deployment   1/0     Healthy   3            default/tag-images   
shop        web      cluster2   Pending    2d    Deployment   0/1     -         1                                 
`},
		{"get work lists one namespace", func(b *bytes.Buffer) error {
			return getPrinted(b, v, "work", "-n", "shop")
		}, `NAME   CLUSTER    STATUS     AGE   KIND
web    cluster1   Deleting   3d    Deployment
web    cluster2   Pending    2d    Deployment
`},
		{"get templates -A -o wide names the claiming policy only while it exists", func(b *bytes.Buffer) error {
			return getPrinted(b, v, "templates", "-A", "-o", "wide")
		}, `NAMESPACE   NAME     KIND         READY   GENERATION   POLICY                            AGE   BINDING REVISION   WARNINGS
            shop     Namespace    -       1            <none>                            3d    <none>             <none>
default     my-app   Deployment   4/6     3            propagationpolicy/my-app-policy   3d    4                  <none>
default     my-app   Service      -       2            <none>                            3d    <none>             spec.ports[0].name: empty
shop        web      Deployment   0/1     1            <none>                            3d    1                  <none>
`},
		{"get deploy lists one kind in one namespace", func(b *bytes.Buffer) error {
			return getPrinted(b, v, "deploy")
		}, `NAME     KIND         READY   GENERATION   POLICY                            AGE
my-app   Deployment   4/6     3            propagationpolicy/my-app-policy   3d
`},
		{"get of a built-in kind with no templates says none are found", func(b *bytes.Buffer) error {
			return getPrinted(b, v, "pods")
		}, "No resources found in default namespace.\n"},
		{"get of a cluster-scoped kind says none are found without a namespace", func(b *bytes.Buffer) error {
			return getPrinted(b, v, "pv")
		}, "No resources found\n"},
		{"get clusters -o wide", func(b *bytes.Buffer) error {
			return getPrinted(b, v, "clusters", "-o", "wide")
		}, `NAME       VERSION   MODE   READY     AGE   STATE         PROVIDER   REGION   NODES   CPU(ALLOC/USED)   MEMORY(ALLOC/USED)
cluster1   v1.31.0   Push   True      3d    Ready         kind       eu       3/3     8/2               8Gi/8Gi
cluster2   v1.31.0   Push   True      3d    Ready         kind       eu       2/3     8/2               8Gi/8Gi
cluster3   v1.31.0   Push   Unknown   3d    Unreachable   kind       us       1/3     8/2               8Gi/8Gi
`},
		{"get placements -A -o wide shows evictions", func(b *bytes.Buffer) error {
			return getPrinted(b, v, "placements", "-A", "-o", "wide")
		}, `NAMESPACE   NAME     KIND         SCHEDULED   CLUSTERS                AGE   STRATEGY           GENERATION   EVICTED                               REASON
default     my-app   Deployment   true        cluster1:4,cluster2:2   2d    Divided/Weighted   3            cluster3(TaintUntolerated,kept)       6 replicas by static weight 2:1
shop        web      Deployment   true        cluster2:1              2d    Duplicated         1            cluster1(ApplicationFailure,purged)   
`},
		{"get KIND/NAME totals ready and desired replicas", func(b *bytes.Buffer) error {
			return printTemplate(b, myApp)
		}, `deployment/my-app -n default
CLUSTER    READY   DESIRED   STATUS    GENERATION   AGE
cluster1   4       4         Running   3            3d
cluster2   0       2         Pending   3            2d
cluster3   2       0         Unknown   3            3d
TOTAL      4       6                                
`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, printed(t, tt.print)); diff != "" {
				t.Errorf("output (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGetOfAnUnknownKindIsAnError(t *testing.T) {
	var b bytes.Buffer
	err := getPrinted(&b, recordedViews(t), "bogus")
	if err == nil || !strings.Contains(err.Error(), `doesn't have a resource type "bogus"`) || b.Len() != 0 {
		t.Errorf("got %v, printed %q", err, b.String())
	}
}

// kubectl get rb -n NS lists no ClusterResourceBinding: placements and
// work of cluster-scoped templates are left out of a list that -n names,
// and listed without it (the default namespace's, as before) and with -A.
func TestGetPlacementsInANamespaceLeavesTheClusterScopedOut(t *testing.T) {
	v := recordedViews(t)
	crd := events.ObjectKey{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition", Name: "widgets.example.io"}
	v.fleet.Decisions = append(v.fleet.Decisions, events.PlacementDecision{Key: crd, Scheduled: true, DecidedAt: recordedAt,
		Clusters: []events.TargetCluster{{Name: "cluster1"}}})
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"placements", "-n", "default"}, false},
		{[]string{"placements"}, true},
		{[]string{"placements", "-A"}, true},
	} {
		out := printed(t, func(b *bytes.Buffer) error { return getPrinted(b, v, c.args...) })
		if got := strings.Contains(out, "widgets.example.io"); got != c.want || !strings.Contains(out, "my-app") {
			t.Errorf("get %s lists the CRD's placement: %v, want %v\n%s", strings.Join(c.args, " "), got, c.want, out)
		}
	}
}

func TestGetWorkWithJSONShowsTheJoinedPhaseNotTheLostClustersUnknown(t *testing.T) {
	v := recordedViews(t)
	out := printed(t, func(b *bytes.Buffer) error { return getPrinted(b, v, "work", "-A", "-o", "json") })
	if !strings.Contains(out, `"phase": "Unknown"`) || strings.Contains(out, `"phase": "Evicted"`) {
		t.Errorf("-o json:\n%s", out)
	}
}

// For each work phase, from recorded events: `get work` and `describe
// work` (and `get KIND/NAME`) show cluster1 in the same phase, with the
// same message.
func TestGetWorkAndDescribeWorkAgreeOnEveryPhase(t *testing.T) {
	placed := events.PlacementDecision{Key: appKey, Generation: 1, Scheduled: true, DecidedAt: recordedAt, Clusters: []events.TargetCluster{{Name: "cluster1", Replicas: 2}}}
	moved := events.PlacementDecision{Key: appKey, Generation: 1, Scheduled: true, DecidedAt: recordedAt, Clusters: []events.TargetCluster{{Name: "cluster2", Replicas: 2}}}
	kept := moved
	kept.Evictions = []events.Eviction{{Cluster: "cluster1", Reason: events.EvictApplicationFailure, PurgeMode: events.PurgeNever, Message: "unhealthy for 5m", EvictedAt: recordedAt}}
	purged := moved
	purged.Evictions = []events.Eviction{{Cluster: "cluster1", Reason: events.EvictApplicationFailure, PurgeMode: events.PurgeDirectly, EvictedAt: recordedAt}}
	report := func(phase string) []events.WorkStatus {
		return []events.WorkStatus{{Key: appKey, Cluster: "cluster1", Generation: 1, Phase: phase, Replicas: 2, CreatedAt: recordedAt}}
	}
	lost := []events.ClusterHealth{{Cluster: "cluster1", State: events.ClusterStateNotReady, Since: recordedAt}}
	for _, tt := range []struct {
		name      string
		placement events.PlacementDecision
		reports   []events.WorkStatus
		health    []events.ClusterHealth
		want      string
	}{
		{"Pending: placed, not reported yet", placed, nil, nil, "Pending"},
		{"Applied: as executord reports it", placed, report(events.WorkApplied), nil, "Applied"},
		{"Progressing: as executord reports it", placed, report(events.WorkProgressing), nil, "Progressing"},
		{"Running: as executord reports it", placed, report(events.WorkRunning), nil, "Running"},
		{"Failed: as executord reports it", placed, report(events.WorkFailed), nil, "Failed"},
		{"Deleting: no longer placed", moved, report(events.WorkRunning), nil, "Deleting"},
		{"Deleting: evicted and purged", purged, report(events.WorkRunning), nil, "Deleting"},
		{"Evicted: evicted, copy kept", kept, report(events.WorkRunning), nil, "Evicted"},
		{"Unknown: the cluster is lost", placed, report(events.WorkRunning), lost, "Unknown"},
		{"Unknown: the cluster of a kept copy is lost", kept, report(events.WorkRunning), lost, "Unknown"},
		{"Deleted: as executord reports it, even from a lost cluster", placed, report(events.WorkDeleted), lost, "Deleted"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var seq uint64
			store := func(typ events.Type, data any) readmodel.Stored {
				e, err := events.New(typ, "/test", "x", data)
				if err != nil {
					t.Fatal(err)
				}
				seq++
				return readmodel.Stored{Event: e, Sequence: seq, Time: recordedAt}
			}
			var reports, health []readmodel.Stored
			for _, s := range tt.reports {
				reports = append(reports, store(events.TypeWorkStatusChanged, s))
			}
			for _, h := range tt.health {
				health = append(health, store(events.TypeClusterHealthChanged, h))
			}
			decisions := readmodel.Decisions([]readmodel.Stored{store(events.TypePlacementDecided, tt.placement)})
			work := readmodel.Join(reports, decisions, health)
			tv, err := readmodel.FindTemplate(decisions, work, "deploy/my-app", "default")
			if err != nil {
				t.Fatal(err)
			}

			f := readmodel.Fleet{Decisions: decisions, Work: work, Published: readmodel.NewPublished()}
			getWork := printed(t, func(b *bytes.Buffer) error { return getPrinted(b, views{fleet: f}, "work", "-o", "wide") })
			getPhase := ""
			for _, line := range strings.Split(getWork, "\n") {
				if f := strings.Fields(line); len(f) > 2 && f[1] == "cluster1" {
					getPhase = f[2]
				}
			}
			describe := printed(t, func(b *bytes.Buffer) error { describeWork(b, tv, f); return nil })
			descPhase, descMsg := field(describe, "cluster1", "STATUS"), field(describe, "cluster1", "MESSAGE")
			getOne := printed(t, func(b *bytes.Buffer) error { return printTemplate(b, tv) })
			onePhase := ""
			for _, line := range strings.Split(getOne, "\n") {
				if f := strings.Fields(line); len(f) > 3 && f[0] == "cluster1" {
					onePhase = f[3]
				}
			}
			if diff := cmp.Diff([]string{tt.want, tt.want, tt.want}, []string{getPhase, descPhase, onePhase}); diff != "" {
				t.Errorf("phase in get work, describe work, get KIND/NAME (-want +got):\n%s\n%s\n%s", diff, getWork, describe)
			}
			if !strings.Contains(getWork, descMsg) {
				t.Errorf("describe work's message %q is not in get work -o wide:\n%s", descMsg, getWork)
			}
		})
	}
}

// field returns cluster's value in column of describe work's Work table.
func field(describe, cluster, column string) string {
	_, work, _ := strings.Cut(describe, "Work:\n")
	lines := strings.Split(work, "\n")
	at := strings.Index(lines[0], column)
	for _, line := range lines[1:] {
		if f := strings.Fields(line); len(f) > 0 && f[0] == cluster && at >= 0 && at < len(line) {
			if column == "MESSAGE" {
				return strings.TrimSpace(line[at:])
			}
			return strings.Fields(line[at:])[0]
		}
	}
	return ""
}
