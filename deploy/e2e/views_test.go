package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// keepLockFromMembers marks every descriptor above stderr close-on-exec. A
// member a test restarts outlives the test: it must not inherit the e2e
// lock that flock handed this process (an open descriptor without
// close-on-exec), or it holds the lock for ever and every other run waits.
func keepLockFromMembers() {
	for fd := 3; fd < 256; fd++ {
		syscall.CloseOnExec(fd)
	}
}

// memberCluster stops and starts one sandbox member with the sandbox's own
// script (the run's sandbox, as the shared lock allows).
func (s *system) memberCluster(verb, name string) {
	s.t.Helper()
	keepLockFromMembers()
	script := filepath.Join(filepath.Dir(s.sandbox), "deploy", "sandbox", "sandbox.sh")
	if _, err := os.Stat(script); err != nil {
		script = filepath.Join("..", "sandbox", "sandbox.sh")
	}
	cmd := exec.Command("bash", script, verb, name)
	cmd.Env = append(os.Environ(), "CLUSTERS=cluster1 cluster2 cluster3", "FLOTILLA_SANDBOX="+s.sandbox, "SANDBOX_DIR="+s.sandbox)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("sandbox.sh %s %s: %v\n%s", verb, name, err, out)
	}
}

// views is what each view says of one template: the phase of every
// cluster's work and the desired total.
type viewsOf struct {
	getWork, getKindName, describe, status map[string]string
	desired                                []string
}

var (
	rowOf   = regexp.MustCompile(`(?m)^\s*(cluster\d)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)`)
	totalOf = regexp.MustCompile(`(?m)^TOTAL\s+(\d+)\s+(\d+)`)
	descTot = regexp.MustCompile(`Replicas:\s+\d+ ready of (\d+) desired`)
)

// readViews reads get work, get deployment/NAME, describe work NAME and
// get deploy NAME -o jsonpath (the aggregated status) for one Deployment.
func (s *system) readViews(ns, name string) viewsOf {
	v := viewsOf{getWork: map[string]string{}, getKindName: map[string]string{}, describe: map[string]string{}, status: map[string]string{}}
	for _, l := range strings.Split(s.mustCLI("get", "work", name, "-n", ns, "-o", "wide"), "\n") {
		if f := strings.Fields(l); len(f) > 4 && f[0] == name && f[4] == "Deployment" {
			v.getWork[f[1]] = f[2]
		}
	}
	one := s.mustCLI("get", "deployment/"+name, "-n", ns)
	for _, m := range rowOf.FindAllStringSubmatch(one, -1) {
		v.getKindName[m[1]] = m[4] // CLUSTER READY DESIRED STATUS
	}
	if m := totalOf.FindStringSubmatch(one); m != nil {
		v.desired = append(v.desired, "get:"+m[2])
	}
	desc := s.mustCLI("describe", "work", "deployment/"+name, "-n", ns)
	_, work, _ := strings.Cut(desc, "Work:\n")
	for _, m := range rowOf.FindAllStringSubmatch(work, -1) {
		v.describe[m[1]] = m[2] // CLUSTER STATUS
	}
	if m := descTot.FindStringSubmatch(desc); m != nil {
		v.desired = append(v.desired, "describe:"+m[1])
	}
	st := s.mustCLI("get", "deploy", name, "-n", ns, "-o", `jsonpath={range .status.clusters[*]}{.cluster}={.phase}{"\n"}{end}`)
	for _, l := range strings.Fields(st) {
		if c, p, ok := strings.Cut(l, "="); ok {
			v.status[c] = p
		}
	}
	v.desired = append(v.desired, "status:"+s.mustCLI("get", "deploy", name, "-n", ns, "-o", "jsonpath={.status.replicas}"))
	return v
}

// agree checks that every view shows each cluster in one phase, the
// phases want gives (a cluster absent from want: any one phase), and that
// every total is desired.
func (v viewsOf) agree(want map[string]string, desired int) error {
	for _, other := range []map[string]string{v.getKindName, v.describe, v.status} {
		if diff := cmp.Diff(v.getWork, other); diff != "" {
			return fmt.Errorf("the views disagree (get work -want +other view):\n%s\n%+v", diff, v)
		}
	}
	for c, p := range want {
		if v.getWork[c] != p {
			return fmt.Errorf("%s is %q, want %q: %+v", c, v.getWork[c], p, v)
		}
	}
	wantTotals := []string{fmt.Sprintf("get:%d", desired), fmt.Sprintf("describe:%d", desired), fmt.Sprintf("status:%d", desired)}
	if diff := cmp.Diff(wantTotals, v.desired); diff != "" {
		return fmt.Errorf("totals (-want +got):\n%s", diff)
	}
	return nil
}

// TestEveryViewAgreesThroughAMemberOutage stops cluster3 under a Divided
// workload of 6 (failover after 10 s, the old copy kept Gracefully) and
// checks at each stage that get work, get deployment/NAME, describe work
// and the template's aggregated status show every cluster in the same
// phase, that the totals are the template's 6 replicas (a kept evicted
// copy desires nothing), and that explain says what changed since its
// decision.
func TestEveryViewAgreesThroughAMemberOutage(t *testing.T) {
	s := newSystem(t)
	stopped := false
	t.Cleanup(func() {
		if stopped {
			s.memberCluster("start", "cluster3")
		}
	})
	s.startAll()
	s.joinAll()
	ns := uniqueNS("views")
	t.Cleanup(func() { s.deleteNamespace(ns) })
	s.applyYAML("web.yaml", dividedWithFailover(ns, "web", 10, "Gracefully", 600))

	eventually(t, 120*time.Second, "every view: web Running 2/2/2", func() error {
		return s.readViews(ns, "web").agree(map[string]string{"cluster1": "Running", "cluster2": "Running", "cluster3": "Running"}, 6)
	})

	s.memberCluster("stop", "cluster3")
	stopped = true
	eventually(t, 120*time.Second, "every view: cluster3 Unknown while it is lost", func() error {
		return s.readViews(ns, "web").agree(map[string]string{"cluster3": "Unknown"}, 6)
	})
	eventually(t, 120*time.Second, "the eviction: web 3/3 on cluster1 and cluster2, cluster3's copy kept", func() error {
		p, err := s.latestPlacement(ns, "web")
		if err != nil {
			return err
		}
		if len(p.Evictions) != 1 || p.Evictions[0].Cluster != "cluster3" {
			return fmt.Errorf("placement %+v", p.Clusters)
		}
		return s.readViews(ns, "web").agree(map[string]string{"cluster1": "Running", "cluster2": "Running", "cluster3": "Unknown"}, 6)
	})
	explain := s.mustCLI("explain", "deploy", "web", "-n", ns)
	if !strings.Contains(explain, "Evictions") || !strings.Contains(explain, "cluster3") {
		t.Errorf("explain after the eviction shows no eviction:\n%s", explain)
	}

	s.memberCluster("start", "cluster3")
	stopped = false
	eventually(t, 180*time.Second, "every view after cluster3's return: its kept copy purged, 6 desired", func() error {
		v := s.readViews(ns, "web")
		if err := v.agree(map[string]string{"cluster1": "Running", "cluster2": "Running"}, 6); err != nil {
			return err
		}
		if p := v.getWork["cluster3"]; p != "" && p != "Evicted" && p != "Deleting" {
			return fmt.Errorf("cluster3's old copy is %q", p)
		}
		return nil
	})
	t.Logf("explain after cluster3's return:\n%s", s.mustCLI("explain", "deploy", "web", "-n", ns))
}
