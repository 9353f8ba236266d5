package console

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/flotilla-io/flotilla/events"
)

// serve starts the console over the events recorded so far.
func serve(t *testing.T, r *recorder) (*Server, *httptest.Server, *recordedSource) {
	t.Helper()
	src := &recordedSource{r: r}
	s, err := New(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts, src
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	return string(b)
}

var (
	stateRE = regexp.MustCompile(`data-cluster="([^"]+)" data-state="([^"]+)"`)
	rowRE   = regexp.MustCompile(`(?s)<tr data-template="([^"]+)".*?</tr>`)
	cellRE  = regexp.MustCompile(`data-cluster="([^"]+)" data-phase="([^"]+)"(?: data-replicas="(\d+)")?`)
)

// states are the overview's clusters: name=state.
func states(html string) []string {
	var out []string
	for _, m := range stateRE.FindAllStringSubmatch(html, -1) {
		out = append(out, m[1]+"="+m[2])
	}
	return out
}

// matrix is the workloads page's cells: template -> "cluster=replicas phase".
func matrix(html string) map[string][]string {
	out := map[string][]string{}
	for _, row := range rowRE.FindAllStringSubmatch(html, -1) {
		for _, c := range cellRE.FindAllStringSubmatch(row[0], -1) {
			out[row[1]] = append(out[row[1]], fmt.Sprintf("%s=%s %s", c[1], c[3], c[2]))
		}
	}
	return out
}

func TestPagesShowTheRecordedFleet(t *testing.T) {
	r := newRecorder(t)
	seed000(r)
	_, ts, _ := serve(t, r)

	if diff := cmp.Diff([]string{"cluster1=Ready", "cluster2=Ready", "cluster3=Ready"}, states(get(t, ts.URL+"/"))); diff != "" {
		t.Errorf("overview after seed 000 (-want +got):\n%s", diff)
	}
	want := map[string][]string{myApp.String(): {"cluster1=3 Running", "cluster2=2 Running", "cluster3=1 Running"}}
	if diff := cmp.Diff(want, matrix(get(t, ts.URL+"/workloads"))); diff != "" {
		t.Errorf("workloads after seed 000 (-want +got):\n%s", diff)
	}
}

func TestAFailoverShowsOnEveryPage(t *testing.T) {
	r := failedOver(t)
	_, ts, _ := serve(t, r)

	overview := get(t, ts.URL+"/")
	if diff := cmp.Diff([]string{"cluster1=Unreachable", "cluster2=Ready", "cluster3=Ready"}, states(overview)); diff != "" {
		t.Errorf("overview (-want +got):\n%s", diff)
	}
	want := map[string][]string{
		myApp.String(): {"cluster1=3 Unknown", "cluster2=2 Running", "cluster3=1 Running"},
		web.String():   {"cluster1=0 Unknown", "cluster2=3 Running", "cluster3=3 Running"},
	}
	if diff := cmp.Diff(want, matrix(get(t, ts.URL+"/workloads"))); diff != "" {
		t.Errorf("workloads (-want +got):\n%s", diff)
	}
	page := get(t, ts.URL+workloadLink(web))
	for _, want := range []string{
		`data-what="placed"`,
		`data-what="moved" data-from="cluster1=2, cluster2=2, cluster3=2" data-to="cluster2=3, cluster3=3"`,
		"cluster1=2, cluster2=2, cluster3=2 → cluster2=3, cluster3=3",
		"claimed by propagationpolicy/web-policy",
		"Strategy:    Divided/Aggregated", // explain's text
		"replicas: 3",                     // the manifest rendered for cluster2
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the workload page lacks %q", want)
		}
	}
	cluster := get(t, ts.URL+"/clusters/cluster1")
	for _, want := range []string{`data-state="Unreachable"`, "cluster.karmada.io/unreachable:NoSchedule", "deployment/web -n default"} {
		if !strings.Contains(cluster, want) {
			t.Errorf("the cluster page lacks %q", want)
		}
	}
}

func TestTheMatrixFiltersAndPages(t *testing.T) {
	r := failedOver(t)
	s, ts, _ := serve(t, r)
	s.PageSize = 1
	for _, c := range []struct {
		name, query string
		want        []string
	}{
		{"no filter, page 1 holds the first template", "", []string{myApp.String()}},
		{"page 2 holds the second", "?page=2", []string{web.String()}},
		{"a page past the last shows the last", "?page=9", []string{web.String()}},
		{"a policy by name", "?policy=web-policy", []string{web.String()}},
		{"a policy by kind/name", "?policy=propagationpolicy/my-app-policy", []string{myApp.String()}},
		{"a policy by short kind/name, as kubectl spells it", "?policy=pp/my-app-policy", []string{myApp.String()}},
		{"a policy by namespace/plural kind/name", "?policy=default/propagationpolicies/web-policy", []string{web.String()}},
		{"a policy of another kind of that name: none", "?policy=cpp/web-policy", nil},
		{"a policy name that only ends like one: none", "?policy=policy", nil},
		{"a kind", "?kind=deploy&page=2", []string{web.String()}},
		{"a namespace with none", "?namespace=shop", nil},
		{"a cluster the template is on", "?cluster=cluster2&page=2", []string{web.String()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for k := range matrix(get(t, ts.URL+"/workloads"+c.query)) {
				got = append(got, k)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("templates shown (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTheEventsPageListsAndFilters(t *testing.T) {
	r := failedOver(t)
	_, ts, _ := serve(t, r)
	page := get(t, ts.URL+"/events?type=failover")
	if n := strings.Count(page, "<td>"+string(events.TypeFailoverEvicted)+"</td>"); n != 1 {
		t.Errorf("the failover filter shows %d failover.evicted events, want 1", n)
	}
	if strings.Contains(page, string(events.TypeWorkStatusChanged)) {
		t.Errorf("the failover filter shows work events")
	}
	for _, attr := range []string{"<dt>specversion</dt><dd>1.0</dd>", "<dt>subject</dt><dd>" + events.FailoverSubject(web) + "</dd>"} {
		if !strings.Contains(page, attr) {
			t.Errorf("the event lacks its CloudEvent attribute %s", attr)
		}
	}
}

func TestADeadLetterIsAWarningOnTheOverview(t *testing.T) {
	r := newRecorder(t)
	seed000(r)
	_, ts, _ := serve(t, r)
	if strings.Contains(get(t, ts.URL+"/"), `id="dead-letters"`) {
		t.Fatal("a warning without dead letters")
	}
	r.add(events.TypeEventDeadLettered, events.DeadLetterSubject("executord"), events.DeadLetter{Consumer: "executord", Reason: "template does not decode", Subject: "flotilla.binding.x"})
	_, ts, _ = serve(t, r)
	if page := get(t, ts.URL+"/"); !strings.Contains(page, `id="dead-letters"`) || !strings.Contains(page, "template does not decode") {
		t.Error("the overview does not warn of the dead letter")
	}
}

// Pages are told of a change within a second, through one Follow however
// many tabs listen, and see the change when they fetch themselves again.
func TestOpenPagesAreToldOfAChangeThroughOneFollow(t *testing.T) {
	r := newRecorder(t)
	seed000(r)
	s, ts, src := serve(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Run(ctx) }()
	_ = get(t, ts.URL+"/workloads") // read before the change

	var streams []*bufio.Reader
	for range 3 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/live", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		streams = append(streams, bufio.NewReader(resp.Body))
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.Clients() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	webPlaced(r)
	for i, st := range streams {
		got := make(chan string, 1)
		go func() {
			for {
				line, err := st.ReadString('\n')
				if err != nil {
					got <- err.Error()
					return
				}
				if strings.HasPrefix(line, "event: ") {
					got <- strings.TrimSpace(line)
					return
				}
			}
		}()
		select {
		case ev := <-got:
			if ev != "event: changed" {
				t.Fatalf("tab %d got %q, want event: changed", i, ev)
			}
		case <-time.After(time.Second - time.Since(start)):
			t.Fatalf("tab %d was not told of the change within a second", i)
		}
	}
	if src.follows != 1 {
		t.Errorf("three tabs made %d Follow calls, want 1", src.follows)
	}
	if _, ok := matrix(get(t, ts.URL+"/workloads"))[web.String()]; !ok {
		t.Error("the refetched page does not show the new template")
	}
}

func TestTheBusTailSendsEveryMatchingEvent(t *testing.T) {
	r := newRecorder(t)
	s, ts, _ := serve(t, r)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = s.Run(ctx) }()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/live?tail=1&type=failover", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	for s.Clients() < 1 {
		time.Sleep(10 * time.Millisecond)
	}
	seed000(r)
	webPlaced(r)
	cluster1Lost(r)
	br := bufio.NewReader(resp.Body)
	var got []string
	for len(got) < 1 {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(line, "data: ") {
			got = append(got, regexp.MustCompile(`"Type":"([^"]+)"`).FindStringSubmatch(line)[1])
		}
	}
	if diff := cmp.Diff([]string{string(events.TypeFailoverEvicted)}, got); diff != "" {
		t.Errorf("the tail filtered on failover sent (-want +got):\n%s", diff)
	}
}

func TestEveryPageIsCompleteWithoutScript(t *testing.T) {
	r := newRecorder(t)
	seed000(r)
	_, ts, _ := serve(t, r)
	for _, path := range []string{"/", "/workloads", workloadLink(myApp), "/clusters/cluster1", "/events", "/assets/console.js", "/assets/console.css"} {
		if page := get(t, ts.URL+path); len(page) == 0 {
			t.Errorf("%s is empty", path)
		}
	}
	resp, err := http.Get(ts.URL + "/clusters/nope")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown cluster is %s, want 404", resp.Status)
	}
}

// The console asks no login: a Secret template's values are not on its
// pages, only their sizes, in the template and in each member's manifest.
func TestAWorkloadPageShowsNoSecretValues(t *testing.T) {
	r := newRecorder(t)
	seed000(r)
	key := events.ObjectKey{Kind: "Secret", Namespace: "default", Name: "db"}
	tpl := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"db","namespace":"default"},"data":{"password":"aHVudGVyMjI="},"stringData":{"user":"admin-plain"}}`
	r.add(events.TypeObjectAccepted, events.ObjectSubject(key), events.ObjectRecord{Key: key, APIVersion: "v1", Generation: 1, Role: events.RoleTemplate, Object: []byte(tpl), UpdatedAt: recordedAt})
	r.add(events.TypeBindingChanged, events.BindingSubject(key), events.Binding{Key: key, APIVersion: "v1", Generation: 1, Revision: 1, Policy: seedPP,
		Template: []byte(tpl), AcceptedAt: recordedAt, CreatedAt: recordedAt})
	r.add(events.TypePlacementDecided, events.PlacementSubject(key), events.PlacementDecision{Key: key, Generation: 1, BindingRevision: 1, Scheduled: true,
		Clusters: []events.TargetCluster{{Name: "cluster1"}}, Strategy: "Duplicated", DecidedAt: r.at,
		Binding: &events.Binding{Key: key, Policy: seedPP, Template: []byte(tpl)}})
	work(r, key, "cluster1", events.WorkRunning, 0)
	_, ts, _ := serve(t, r)
	page := get(t, ts.URL+workloadLink(key))
	for _, secret := range []string{"aHVudGVyMjI=", "hunter22", "admin-plain"} {
		if strings.Contains(page, secret) {
			t.Errorf("the page shows the Secret value %q", secret)
		}
	}
	if n := strings.Count(page, "(8 bytes, not shown)"); n < 2 {
		t.Errorf("password's size shown %d times, want in the template and in cluster1's manifest:\n%s", n, page)
	}
}

// The overview counts every template, placed or only accepted (no policy
// claims it yet), as the workloads page lists them.
func TestTheOverviewCountsUnplacedTemplates(t *testing.T) {
	r := newRecorder(t)
	seed000(r)
	orphan := events.ObjectKey{Kind: "ConfigMap", Namespace: "default", Name: "unclaimed"}
	r.add(events.TypeObjectAccepted, events.ObjectSubject(orphan), events.ObjectRecord{Key: orphan, APIVersion: "v1", Generation: 1, Role: events.RoleTemplate,
		Object: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"unclaimed","namespace":"default"}}`), UpdatedAt: recordedAt})
	_, ts, _ := serve(t, r)
	if m := regexp.MustCompile(`data-total="templates">(\d+)<`).FindStringSubmatch(get(t, ts.URL+"/")); m == nil || m[1] != "2" {
		t.Errorf("overview templates = %v, want 2 (my-app and the unclaimed ConfigMap)", m)
	}
}
