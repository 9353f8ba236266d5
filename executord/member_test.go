package executord

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// fakeMember is the smallest member API server the worker needs for apps/v1
// Deployments and v1 ConfigMaps: discovery, namespaces, and get,
// server-side apply and delete of those two kinds. Down makes it answer 503 to everything, as an API server
// behind a load balancer with no backend does. A fake stands in for the
// real API server that the e2e suite uses; what is tested here is the
// worker's bookkeeping, not the member's behaviour. Refuse makes it answer
// every server-side apply with a Status.
type fakeMember struct {
	srv    *httptest.Server
	down   atomic.Bool
	refuse atomic.Pointer[metav1.Status]

	mu      sync.Mutex
	objects map[string]map[string]any // resource/namespace/name
	status  map[string]any            // the controller's status for every object
	applies int
	patches int // server-side applies asked for, refused ones included
	deletes []string
}

func newFakeMember(t *testing.T) *fakeMember {
	m := &fakeMember{objects: map[string]map[string]any{}, status: map[string]any{}}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.srv.Close)
	return m
}

// put stores a Deployment as if Flotilla had applied it earlier.
func (m *fakeMember) put(ns, name string, managed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	labels := map[string]any{}
	if managed {
		labels["flotilla.io/managed"] = "true"
	}
	m.objects["deployments/"+ns+"/"+name] = map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": ns, "generation": int64(1), "labels": labels}, "spec": map[string]any{"replicas": int64(1)}}
}

func (m *fakeMember) setStatus(s map[string]any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status = s
}

// has reports whether the member holds resource/namespace/name.
func (m *fakeMember) has(key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.objects[key]
	return ok
}

// asked is how many server-side applies the member was asked for.
func (m *fakeMember) asked() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.patches
}

func (m *fakeMember) counts() (applies, deletes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.applies, len(m.deletes)
}

func (m *fakeMember) serve(w http.ResponseWriter, r *http.Request) {
	if m.down.Load() {
		http.Error(w, "no backend", http.StatusServiceUnavailable)
		return
	}
	write := func(code int, body any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(body)
	}
	notFound := func(name string) {
		write(http.StatusNotFound, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404,
			"message": name + " not found", "details": map[string]any{"name": name}})
	}
	resource := func(name, kind string, namespaced bool) map[string]any {
		return map[string]any{"name": name, "singularName": strings.ToLower(kind), "namespaced": namespaced, "kind": kind,
			"verbs": []string{"get", "list", "create", "patch", "delete"}}
	}
	path := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.URL.Path == "/api":
		write(200, map[string]any{"kind": "APIVersions", "versions": []string{"v1"}})
	case r.URL.Path == "/apis":
		gv := map[string]any{"groupVersion": "apps/v1", "version": "v1"}
		write(200, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": []any{map[string]any{"name": "apps", "versions": []any{gv}, "preferredVersion": gv}}})
	case r.URL.Path == "/api/v1":
		write(200, map[string]any{"kind": "APIResourceList", "groupVersion": "v1", "resources": []any{resource("namespaces", "Namespace", false), resource("configmaps", "ConfigMap", true)}})
	case r.URL.Path == "/apis/apps/v1":
		write(200, map[string]any{"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "apps/v1", "resources": []any{resource("deployments", "Deployment", true)}})
	case len(path) == 4 && path[2] == "namespaces" && r.Method == http.MethodGet:
		write(200, map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": path[3]}})
	case len(path) == 7 && path[1] == "apps" && path[5] == "deployments":
		m.object(r, "deployments/"+path[4]+"/"+path[6], write, notFound)
	case len(path) == 6 && path[0] == "api" && path[4] == "configmaps":
		m.object(r, "configmaps/"+path[3]+"/"+path[5], write, notFound)
	default:
		notFound(r.URL.Path)
	}
}

func (m *fakeMember) object(r *http.Request, key string, write func(int, any), notFound func(string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, ok := m.objects[key]
	switch r.Method {
	case http.MethodGet:
		if !ok {
			notFound(key)
			return
		}
	case http.MethodDelete:
		if !ok {
			notFound(key)
			return
		}
		delete(m.objects, key)
		m.deletes = append(m.deletes, key)
		write(200, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Success"})
		return
	case http.MethodPatch:
		m.patches++
		if st := m.refuse.Load(); st != nil {
			write(int(st.Code), map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": st.Reason, "code": st.Code, "message": st.Message})
			return
		}
		body, _ := io.ReadAll(r.Body)
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil {
			write(400, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "BadRequest", "code": 400, "message": err.Error()})
			return
		}
		md := obj["metadata"].(map[string]any)
		md["generation"] = int64(1)
		if ok {
			md["generation"] = cur["metadata"].(map[string]any)["generation"].(int64) + 1
		}
		m.objects[key], cur = obj, obj
		m.applies++
	default:
		write(405, map[string]any{"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "MethodNotAllowed", "code": 405})
		return
	}
	out := maps.Clone(cur)
	if strings.HasPrefix(key, "deployments/") {
		st := maps.Clone(m.status)
		if _, set := st["observedGeneration"]; !set {
			st["observedGeneration"] = cur["metadata"].(map[string]any)["generation"]
		}
		out["status"] = st
	}
	write(200, out)
}
