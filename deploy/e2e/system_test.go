// Package e2e drives Flotilla the way a user does: the flotilla binary as
// separate daemon processes and CLI calls, a real nats-server, and member
// clusters that are real kube-apiservers from the sandbox (make clusters).
// Results are checked with client-go against the members themselves.
package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/events/natsbus"
)

var members = []string{"cluster1", "cluster2", "cluster3"}

// system is one Flotilla installation under test: NATS in this process,
// each daemon a separate flotilla process.
type system struct {
	t       *testing.T
	bin     string
	dir     string
	natsURL string
	sandbox string
	// artifacts: where every process's whole log is kept when the test
	// ends (t.ArtifactDir: kept under go test -artifacts, as make test
	// runs it; removed otherwise).
	artifacts string
	mu        sync.Mutex
	procs     map[string]*exec.Cmd
	// namespaces the test deleted in the members (deleteNamespace), deleted
	// again once the daemons are stopped: an executord that was applying
	// into one as it was deleted creates it again.
	namespaces []string
}

func newSystem(t *testing.T) *system {
	t.Helper()
	if os.Getenv("FLOTILLA_E2E") != "1" {
		t.Skip("e2e: run through `make test` (it starts the sandbox member clusters and sets FLOTILLA_E2E=1)")
	}
	bin, sandbox := os.Getenv("FLOTILLA_BIN"), os.Getenv("FLOTILLA_SANDBOX")
	if bin == "" || sandbox == "" {
		t.Fatal("FLOTILLA_BIN and FLOTILLA_SANDBOX must be set (make test sets them)")
	}
	dir := t.TempDir()
	srv, err := natsbus.StartEmbedded("127.0.0.1:0", filepath.Join(dir, "nats"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	s := &system{t: t, bin: bin, dir: dir, natsURL: srv.URL(), sandbox: sandbox, artifacts: t.ArtifactDir(), procs: map[string]*exec.Cmd{}}
	t.Cleanup(s.stopAll)
	return s
}

// start runs one daemon as its own process; its log goes to dir/<name>.log (appended across restarts).
func (s *system) start(name string, args ...string) {
	s.t.Helper()
	daemon := strings.SplitN(name, "-", 2)[0]
	full := append([]string{daemon, "--nats-url", s.natsURL, "--metrics-addr", "127.0.0.1:0", "--log-format", "console", "--instance", name}, args...)
	if daemon == "healthd" || daemon == "executord" {
		full = append(full, "--credentials-key", filepath.Join(s.dir, "credentials.key"))
	}
	if daemon == "healthd" && !slices.Contains(args, "--probe-interval") {
		full = append(full, "--probe-interval", "1s")
	}
	if daemon == "executord" {
		full = append(full, "--resync-interval", "2s")
	}
	s.process(name, full...)
}

// process runs `flotilla ARGS...` as the system's process name, its
// output appended to dir/<name>.log; stopAll stops it.
func (s *system) process(name string, args ...string) {
	s.t.Helper()
	log, err := os.OpenFile(filepath.Join(s.dir, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command(s.bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); log.Close() }()
	s.mu.Lock()
	s.procs[name] = cmd
	s.mu.Unlock()
}

// kill stops a daemon abruptly (SIGKILL), as a crash would.
func (s *system) kill(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.procs[name]; c != nil && c.Process != nil {
		_ = c.Process.Kill()
		time.Sleep(100 * time.Millisecond)
		delete(s.procs, name)
	}
}

func (s *system) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.procs {
		if c.Process != nil {
			_ = c.Process.Signal(os.Interrupt)
		}
	}
	time.Sleep(300 * time.Millisecond)
	for n, c := range s.procs {
		if c.Process != nil {
			_ = c.Process.Kill()
		}
		if s.t.Failed() {
			b, _ := os.ReadFile(filepath.Join(s.dir, n+".log"))
			s.t.Logf("---- %s log (tail) ----\n%s", n, tail(string(b), 3000))
		}
	}
	s.keepLogs()
	for _, ns := range s.namespaces {
		for _, m := range members {
			_ = s.member(m).CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
		}
	}
}

// keepLogs copies every process's whole log to the test's artifact
// directory (a failure prints only their tails): `make test` keeps them in
// bin/test-output.
func (s *system) keepLogs() {
	logs, _ := filepath.Glob(filepath.Join(s.dir, "*.log")) // those of processes killed and not restarted too
	for _, l := range logs {
		if b, err := os.ReadFile(l); err == nil {
			if err := os.WriteFile(filepath.Join(s.artifacts, filepath.Base(l)), b, 0o644); err != nil {
				s.t.Logf("keeping logs: %v", err)
			}
		}
	}
	if s.t.Failed() {
		s.t.Logf("every process's whole log: %s", s.artifacts)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (s *system) startAll() {
	daemons := []string{"policyd", "schedulerd", "healthd", "executord"}
	for _, d := range daemons {
		s.start(d)
	}
	s.waitDaemonsReady(daemons...)
}

// waitDaemonsReady waits until each daemon has logged that it is ready: streams
// ensured, state rebuilt, consumers bound (a publish before that finds no
// stream).
func (s *system) waitDaemonsReady(daemons ...string) {
	s.t.Helper()
	for _, d := range daemons {
		eventually(s.t, 60*time.Second, d+" ready", func() error {
			b, _ := os.ReadFile(filepath.Join(s.dir, d+".log"))
			if !strings.Contains(string(b), d+" ready") {
				return fmt.Errorf("not yet")
			}
			return nil
		})
	}
}

// cli runs a flotilla client command; it returns stdout, stderr and the exit code.
func (s *system) cli(args ...string) (string, string, int) {
	s.t.Helper()
	out, errs, code, err := runFlotilla(s.bin, s.natsURL, args...)
	if err != nil {
		s.t.Fatalf("flotilla %v: %v", args, err)
	}
	return out, errs, code
}

// startCLI starts a flotilla client command and returns at once; wait
// returns its stdout, stderr and exit code, or the error that kept it from
// running. For commands run side by side (wait is safe to call from any
// goroutine, once).
func (s *system) startCLI(args ...string) (wait func() (stdout, stderr string, code int, err error)) {
	return startFlotilla(s.bin, s.natsURL, args...)
}

// runFlotilla runs a flotilla client command against natsURL and returns
// stdout, stderr, the exit code, and an error when it could not run. It
// does not touch the test, so a goroutine may call it.
func runFlotilla(bin, natsURL string, args ...string) (string, string, int, error) {
	return startFlotilla(bin, natsURL, args...)()
}

// startFlotilla starts a flotilla client command against natsURL; wait
// returns what runFlotilla does.
func startFlotilla(bin, natsURL string, args ...string) (wait func() (stdout, stderr string, code int, err error)) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "FLOTILLA_NATS_URL="+natsURL)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return func() (string, string, int, error) { return "", "", 0, err }
	}
	return func() (string, string, int, error) {
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), errb.String(), ee.ExitCode(), nil
		}
		return out.String(), errb.String(), 0, err
	}
}

// waitDeployments waits up to d until every member holds exactly n
// Deployments in namespace ns.
func (s *system) waitDeployments(ns string, n int, d time.Duration) {
	s.t.Helper()
	for _, m := range members {
		cs := s.member(m)
		eventually(s.t, d, fmt.Sprintf("%d deployments in %s", n, m), func() error {
			l, err := cs.AppsV1().Deployments(ns).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				return err
			}
			if len(l.Items) != n {
				return fmt.Errorf("%d there", len(l.Items))
			}
			return nil
		})
	}
}

// mustCLI runs a client command that must succeed.
func (s *system) mustCLI(args ...string) string {
	s.t.Helper()
	out, errs, code := s.cli(args...)
	if code != 0 {
		s.t.Fatalf("flotilla %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errs)
	}
	return out
}

// write stores content in the test's directory as name and returns its path.
func (s *system) write(name, content string) string {
	s.t.Helper()
	p := filepath.Join(s.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// joinAll registers the sandbox members and waits until healthd sees them Ready.
func (s *system) joinAll() {
	s.t.Helper()
	for _, m := range members {
		s.mustCLI("join", m, "--cluster-kubeconfig", filepath.Join(s.sandbox, m+".kubeconfig"))
	}
	s.waitReady(len(members))
}

// waitReady waits until healthd reports n members Ready.
func (s *system) waitReady(n int) {
	s.t.Helper()
	eventually(s.t, 60*time.Second, "members Ready", func() error {
		out := s.mustCLI("get", "clusters", "-o", "jsonpath={range .items[*]}{.status.conditions[?(@.type==\"Ready\")].status}{\"\\n\"}{end}")
		ready := strings.Count(out, "True")
		if ready != n {
			return fmt.Errorf("%d of %d Ready: %s", ready, n, out)
		}
		return nil
	})
}

// member returns a client-go clientset for a sandbox member.
func (s *system) member(name string) kubernetes.Interface {
	s.t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(s.sandbox, name+".kubeconfig"))
	if err != nil {
		s.t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	return cs
}

// eventually retries f until it succeeds or the deadline passes.
func eventually(t *testing.T, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s: %v", d, what, err)
}

// cleanMembers removes test objects left in the members by an earlier run
// (the sandbox outlives test runs on a developer machine).
func (s *system) cleanMembers(namespace string, deployments, services []string) {
	ctx := context.Background()
	for _, m := range members {
		cs := s.member(m)
		for _, d := range deployments {
			_ = cs.AppsV1().Deployments(namespace).Delete(ctx, d, metav1.DeleteOptions{})
		}
		for _, sv := range services {
			_ = cs.CoreV1().Services(namespace).Delete(ctx, sv, metav1.DeleteOptions{})
		}
	}
	for _, m := range members {
		cs := s.member(m)
		for _, d := range deployments {
			eventually(s.t, 30*time.Second, "old "+d+" gone from "+m, func() error {
				_, err := cs.AppsV1().Deployments(namespace).Get(ctx, d, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return nil
				}
				return fmt.Errorf("still there: %v", err)
			})
		}
	}
}

// deleteNamespace removes a test namespace from every member (its pods hold
// the fake nodes' pod capacity otherwise).
func (s *system) deleteNamespace(ns string) {
	s.mu.Lock()
	s.namespaces = append(s.namespaces, ns)
	s.mu.Unlock()
	for _, m := range members {
		_ = s.member(m).CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	}
}

var servingLine = regexp.MustCompile(`serving /metrics /healthz /readyz\s+\{"addr": "([^"]+)"\}`)

// endpoint returns http://<addr> of a daemon's /metrics, /healthz, /readyz (from its log).
func (s *system) endpoint(name string) string {
	s.t.Helper()
	var addr string
	eventually(s.t, 10*time.Second, name+" serving its endpoints", func() error {
		b, _ := os.ReadFile(filepath.Join(s.dir, name+".log"))
		m := servingLine.FindAllStringSubmatch(string(b), -1)
		if len(m) == 0 {
			return fmt.Errorf("not yet")
		}
		addr = m[len(m)-1][1]
		return nil
	})
	return "http://" + addr
}

// httpGet returns the status code and body of a GET.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
