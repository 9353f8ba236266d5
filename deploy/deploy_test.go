// Package deploy_test checks the deployment artefacts against what the code
// expects: the Kubernetes manifests (strictly decoded into the k8s.io/api
// types), the Dockerfile, the static build it relies on, and the event
// catalogue in docs/events.md.
package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/schemas"
)

const (
	manifestDir = "kubernetes"
	namespace   = "flotilla-system"
	natsURL     = "nats://nats.flotilla-system:4222"
	metricsPort = 9090

	credentialsSecret = "flotilla-credentials-key"
	credentialsFile   = "/etc/flotilla/credentials.key"

	// streamMaxBytes is the MaxBytes every stream gets in
	// events/natsbus EnsureStreams; JetStream reserves it up front.
	streamMaxBytes = 4 << 30
)

// daemons and whether each needs the credentials key.
var daemons = map[string]bool{"policyd": false, "schedulerd": false, "executord": true, "healthd": true}

// kinds are the objects the manifests may contain, by apiVersion and kind,
// with the Go type each must decode into without unknown fields. Only GA
// APIs: the manifests must apply unchanged to current Kubernetes.
var kinds = map[string]func() any{
	"v1/Namespace":                       func() any { return &corev1.Namespace{} },
	"v1/ServiceAccount":                  func() any { return &corev1.ServiceAccount{} },
	"v1/ConfigMap":                       func() any { return &corev1.ConfigMap{} },
	"v1/PersistentVolumeClaim":           func() any { return &corev1.PersistentVolumeClaim{} },
	"v1/Secret":                          func() any { return &corev1.Secret{} },
	"v1/Service":                         func() any { return &corev1.Service{} },
	"apps/v1/Deployment":                 func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet":                func() any { return &appsv1.StatefulSet{} },
	"policy/v1/PodDisruptionBudget":      func() any { return &policyv1.PodDisruptionBudget{} },
	"networking.k8s.io/v1/NetworkPolicy": func() any { return &networkingv1.NetworkPolicy{} },
}

// manifest is one YAML document of deploy/kubernetes.
type manifest struct {
	file  string
	index int // 1-based within the file
	meta  struct {
		metav1.TypeMeta
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	obj any // the typed object
}

func (m manifest) String() string {
	return fmt.Sprintf("%s (document %d, %s %s)", m.file, m.index, m.meta.Kind, m.meta.Metadata.Name)
}

// splitYAML splits a multi-document YAML file on "---" lines and drops
// documents that hold only comments or whitespace.
func splitYAML(b []byte) [][]byte {
	var docs [][]byte
	var cur bytes.Buffer
	flush := func() {
		if hasContent(cur.Bytes()) {
			docs = append(docs, slices.Clone(cur.Bytes()))
		}
		cur.Reset()
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimRight(line, " \t") == "---" {
			flush()
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	flush()
	return docs
}

func hasContent(doc []byte) bool {
	for line := range strings.SplitSeq(string(doc), "\n") {
		if s := strings.TrimSpace(line); s != "" && !strings.HasPrefix(s, "#") {
			return true
		}
	}
	return false
}

// loadManifests decodes every Kubernetes object under deploy/kubernetes
// (kustomization.yaml excepted) strictly into its k8s.io/api type.
func loadManifests(t testing.TB) []manifest {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join(manifestDir, "*.yml"))
	files = append(files, more...)
	sort.Strings(files)
	var out []manifest
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range splitYAML(raw) {
			m := manifest{file: f, index: i + 1}
			if err := yaml.Unmarshal(doc, &m.meta); err != nil {
				t.Errorf("%s document %d: %v", f, i+1, err)
				continue
			}
			newObj, ok := kinds[m.meta.APIVersion+"/"+m.meta.Kind]
			if !ok {
				t.Errorf("%s: apiVersion %q kind %q is not one this test knows (GA APIs only; add it to kinds)", m, m.meta.APIVersion, m.meta.Kind)
				continue
			}
			m.obj = newObj()
			if err := yaml.UnmarshalStrict(doc, m.obj); err != nil {
				t.Errorf("%s: strict decode: %v", m, err)
				continue
			}
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		t.Fatalf("no manifests found under %s", manifestDir)
	}
	return out
}

func TestManifestsAreValidObjects(t *testing.T) {
	ms := loadManifests(t)
	seen := map[string]manifest{}
	hasNamespace := false
	for _, m := range ms {
		if m.meta.APIVersion == "" || m.meta.Kind == "" || m.meta.Metadata.Name == "" {
			t.Errorf("%s: apiVersion, kind and metadata.name are required", m)
		}
		id := m.meta.APIVersion + "/" + m.meta.Kind + "/" + m.meta.Metadata.Namespace + "/" + m.meta.Metadata.Name
		if prev, dup := seen[id]; dup {
			t.Errorf("%s: duplicates %s", m, prev)
		}
		seen[id] = m
		switch m.meta.Kind {
		case "Namespace":
			hasNamespace = hasNamespace || m.meta.Metadata.Name == namespace
			if m.meta.Metadata.Namespace != "" {
				t.Errorf("%s: a Namespace has no namespace", m)
			}
		default:
			if m.meta.Metadata.Namespace != namespace {
				t.Errorf("%s: metadata.namespace is %q, want %q (the daemons' --nats-url depends on it)", m, m.meta.Metadata.Namespace, namespace)
			}
		}
		if m.meta.Metadata.Labels["app.kubernetes.io/part-of"] != "flotilla" {
			t.Errorf("%s: want label app.kubernetes.io/part-of: flotilla", m)
		}
	}
	if !hasNamespace {
		t.Errorf("no Namespace %s among the manifests", namespace)
	}
}

func TestKustomizationListsEveryManifest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(manifestDir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Resources  []string `json:"resources"`
		Images     []struct {
			Name    string `json:"name"`
			NewName string `json:"newName,omitempty"`
			NewTag  string `json:"newTag,omitempty"`
			Digest  string `json:"digest,omitempty"`
		} `json:"images"`
	}
	if err := yaml.UnmarshalStrict(raw, &k); err != nil {
		t.Fatalf("kustomization.yaml: %v", err)
	}
	if k.APIVersion != "kustomize.config.k8s.io/v1beta1" || k.Kind != "Kustomization" {
		t.Errorf("kustomization.yaml: apiVersion/kind %s/%s", k.APIVersion, k.Kind)
	}
	files, _ := filepath.Glob(filepath.Join(manifestDir, "*.yaml"))
	var want []string
	for _, f := range files {
		if b := filepath.Base(f); b != "kustomization.yaml" {
			want = append(want, b)
		}
	}
	got := slices.Clone(k.Resources)
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("kustomization.yaml resources = %v, want every manifest file %v", got, want)
	}
	images := map[string]bool{}
	for _, img := range k.Images {
		images[img.Name] = true
	}
	for _, w := range workloads(loadManifests(t)) {
		for _, c := range w.spec.Containers {
			name := imageName(c.Image)
			if strings.Contains(name, "flotilla") && !images[name] {
				t.Errorf("%s: image %s has no images: entry in kustomization.yaml", w, name)
			}
		}
	}
}

func imageName(ref string) string {
	if i := strings.Index(ref, "@"); i >= 0 {
		ref = ref[:i]
	}
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

// workload is a pod template of a Deployment or StatefulSet.
type workload struct {
	m        manifest
	replicas *int32
	selector *metav1.LabelSelector
	labels   map[string]string
	spec     corev1.PodSpec
	claims   []corev1.PersistentVolumeClaim
}

func (w workload) String() string { return w.m.meta.Kind + "/" + w.m.meta.Metadata.Name }

func workloads(ms []manifest) []workload {
	var out []workload
	for _, m := range ms {
		switch o := m.obj.(type) {
		case *appsv1.Deployment:
			out = append(out, workload{m, o.Spec.Replicas, o.Spec.Selector, o.Spec.Template.Labels, o.Spec.Template.Spec, nil})
		case *appsv1.StatefulSet:
			out = append(out, workload{m, o.Spec.Replicas, o.Spec.Selector, o.Spec.Template.Labels, o.Spec.Template.Spec, o.Spec.VolumeClaimTemplates})
		}
	}
	return out
}

func find[T any](ms []manifest, name string) *T {
	for _, m := range ms {
		if o, ok := m.obj.(*T); ok && m.meta.Metadata.Name == name {
			return o
		}
	}
	return nil
}

func TestPodsAreHardened(t *testing.T) {
	ms := loadManifests(t)
	ws := workloads(ms)
	if len(ws) == 0 {
		t.Fatal("no workloads")
	}
	for _, w := range ws {
		t.Run(w.String(), func(t *testing.T) {
			sel, err := metav1.LabelSelectorAsSelector(w.selector)
			if err != nil || sel.Empty() || !sel.Matches(labels.Set(w.labels)) {
				t.Errorf("selector %v must be non-empty and match the pod labels %v (err %v)", w.selector, w.labels, err)
			}
			if w.replicas == nil {
				t.Errorf("spec.replicas: set it explicitly")
			}
			ps := w.spec
			if ps.DeprecatedServiceAccount != "" {
				t.Errorf("spec.serviceAccount is deprecated: use serviceAccountName")
			}
			if ps.ServiceAccountName == "" || find[corev1.ServiceAccount](ms, ps.ServiceAccountName) == nil {
				t.Errorf("serviceAccountName %q: want a ServiceAccount of its own, defined in the manifests", ps.ServiceAccountName)
			}
			if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
				t.Errorf("automountServiceAccountToken: want false (no daemon talks to the host cluster's API)")
			}
			if sc := ps.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot ||
				sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("pod securityContext: want runAsNonRoot: true and seccompProfile RuntimeDefault")
			}
			volumes := map[string]corev1.Volume{}
			for _, v := range ps.Volumes {
				volumes[v.Name] = v
				if v.ConfigMap != nil && find[corev1.ConfigMap](ms, v.ConfigMap.Name) == nil {
					t.Errorf("volume %s: ConfigMap %s is not in the manifests", v.Name, v.ConfigMap.Name)
				}
				if v.Secret != nil && v.Secret.SecretName != credentialsSecret {
					t.Errorf("volume %s: Secret %s: the only Secret pods use is %s", v.Name, v.Secret.SecretName, credentialsSecret)
				}
				if v.HostPath != nil {
					t.Errorf("volume %s: hostPath is not allowed", v.Name)
				}
			}
			for _, c := range w.claims {
				volumes[c.Name] = corev1.Volume{Name: c.Name}
			}
			all := append(slices.Clone(ps.InitContainers), ps.Containers...)
			for _, c := range all {
				checkContainer(t, c, volumes)
			}
		})
	}
}

func checkContainer(t *testing.T, c corev1.Container, volumes map[string]corev1.Volume) {
	t.Helper()
	sc := c.SecurityContext
	switch {
	case sc == nil:
		t.Errorf("container %s: no securityContext", c.Name)
	default:
		if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			t.Errorf("container %s: securityContext.runAsNonRoot must be true", c.Name)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("container %s: securityContext.readOnlyRootFilesystem must be true", c.Name)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("container %s: securityContext.allowPrivilegeEscalation must be false", c.Name)
		}
		if sc.Privileged != nil && *sc.Privileged {
			t.Errorf("container %s: privileged", c.Name)
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
			t.Errorf("container %s: capabilities must drop ALL and add none", c.Name)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			t.Errorf("container %s: runAsUser 0", c.Name)
		}
	}
	if c.Image == "" || strings.HasSuffix(c.Image, ":latest") || !strings.Contains(c.Image[strings.LastIndex(c.Image, "/")+1:], ":") {
		t.Errorf("container %s: image %q: want a pinned tag", c.Name, c.Image)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		q, ok := c.Resources.Requests[r]
		if !ok || q.IsZero() {
			t.Errorf("container %s: resources.requests.%s is required", c.Name, r)
		}
	}
	if lim, ok := c.Resources.Limits[corev1.ResourceMemory]; ok && lim.Cmp(c.Resources.Requests[corev1.ResourceMemory]) < 0 {
		t.Errorf("container %s: memory limit %s below the request", c.Name, lim.String())
	}
	for _, vm := range c.VolumeMounts {
		if _, ok := volumes[vm.Name]; !ok {
			t.Errorf("container %s: volumeMount %s names no volume", c.Name, vm.Name)
		}
	}
}

// cliArgs splits a flotilla command line into its subcommand and flags
// (--flag value and --flag=value forms).
func cliArgs(c corev1.Container) (string, map[string]string, error) {
	argv := append(slices.Clone(c.Command), c.Args...)
	if len(argv) > 0 && (argv[0] == "/flotilla" || argv[0] == "flotilla") {
		argv = argv[1:]
	}
	if len(argv) == 0 || strings.HasPrefix(argv[0], "-") {
		return "", nil, fmt.Errorf("no subcommand in %q", argv)
	}
	flags := map[string]string{}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if !strings.HasPrefix(a, "--") {
			return "", nil, fmt.Errorf("unexpected argument %q in %q", a, argv)
		}
		if k, v, ok := strings.Cut(a, "="); ok {
			flags[k] = v
			continue
		}
		v := ""
		if i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "--") {
			v = argv[i+1]
			i++
		}
		flags[a] = v
	}
	return argv[0], flags, nil
}

func containerPort(c corev1.Container, p intstr.IntOrString) int32 {
	if p.Type == intstr.Int {
		return p.IntVal
	}
	for _, cp := range c.Ports {
		if cp.Name == p.StrVal {
			return cp.ContainerPort
		}
	}
	return -1
}

func TestDaemonDeployments(t *testing.T) {
	ms := loadManifests(t)
	found := map[string]bool{}
	for _, m := range ms {
		d, ok := m.obj.(*appsv1.Deployment)
		if !ok {
			continue
		}
		if _, known := daemons[d.Name]; !known {
			t.Errorf("Deployment %s is not one of the daemons %v", d.Name, slices.Sorted(mapsKeys(daemons)))
			continue
		}
		found[d.Name] = true
		t.Run(d.Name, func(t *testing.T) { checkDaemon(t, d, daemons[d.Name]) })
	}
	for name := range daemons {
		if !found[name] {
			t.Errorf("no Deployment for %s", name)
		}
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func checkDaemon(t *testing.T, d *appsv1.Deployment, needsKey bool) {
	// Replicas, the standby fence and the strategy: ha_test.go.
	cs := d.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("want one container, got %d", len(cs))
	}
	c := cs[0]
	sub, flags, err := cliArgs(c)
	if err != nil {
		t.Fatal(err)
	}
	if sub != d.Name {
		t.Errorf("runs `flotilla %s`, want `flotilla %s`", sub, d.Name)
	}
	for flag, want := range map[string]string{"--nats-url": natsURL, "--stream-replicas": "3", "--metrics-addr": fmt.Sprintf(":%d", metricsPort), "--log-format": "json"} {
		if got, ok := flags[flag]; !ok || got != want {
			t.Errorf("args: want %s %s, got %q (set: %v)", flag, want, got, ok)
		}
	}
	probes := map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe}
	for path, p := range probes {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("probe for %s: want an httpGet probe", path)
			continue
		}
		if p.HTTPGet.Path != path || containerPort(c, p.HTTPGet.Port) != metricsPort {
			t.Errorf("probe: got %s on port %d, want %s on %d", p.HTTPGet.Path, containerPort(c, p.HTTPGet.Port), path, metricsPort)
		}
	}
	key, hasKey := flags["--credentials-key"]
	if !needsKey {
		if hasKey {
			t.Errorf("--credentials-key: only healthd and executord hold the credentials key")
		}
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Secret != nil {
				t.Errorf("volume %s mounts a Secret; %s needs none", v.Name, d.Name)
			}
		}
		return
	}
	if key != credentialsFile {
		t.Errorf("--credentials-key %q, want %s", key, credentialsFile)
	}
	if !servesFile(d.Spec.Template.Spec, c, credentialsSecret, credentialsFile) {
		t.Errorf("%s is not mounted read-only from Secret %s", credentialsFile, credentialsSecret)
	}
}

// servesFile reports whether file is a read-only mount of a key of secret.
func servesFile(ps corev1.PodSpec, c corev1.Container, secret, file string) bool {
	for _, vm := range c.VolumeMounts {
		for _, v := range ps.Volumes {
			if v.Name != vm.Name || v.Secret == nil || v.Secret.SecretName != secret || !vm.ReadOnly {
				continue
			}
			if vm.SubPath != "" {
				if vm.MountPath == file {
					return true
				}
				continue
			}
			if len(v.Secret.Items) == 0 {
				if path.Dir(file) == vm.MountPath {
					return true
				}
				continue
			}
			for _, it := range v.Secret.Items {
				if path.Join(vm.MountPath, it.Path) == file {
					return true
				}
			}
		}
	}
	return false
}

func TestNATS(t *testing.T) {
	ms := loadManifests(t)
	sts := find[appsv1.StatefulSet](ms, "nats")
	if sts == nil {
		t.Fatal("no StatefulSet nats")
	}
	podLabels := labels.Set(sts.Spec.Template.Labels)

	// The daemons' --nats-url names Service nats in flotilla-system, port 4222.
	svc := find[corev1.Service](ms, "nats")
	if svc == nil {
		t.Fatal("no Service nats (the daemons connect to " + natsURL + ")")
	}
	if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(podLabels) {
		t.Errorf("Service nats selects %v, which does not match the NATS pods %v", svc.Spec.Selector, podLabels)
	}
	c := sts.Spec.Template.Spec.Containers[0]
	client := false
	for _, p := range svc.Spec.Ports {
		if p.Port == 4222 && containerPort(c, p.TargetPort) == 4222 {
			client = true
		}
	}
	if !client {
		t.Errorf("Service nats: want port 4222 reaching the container's 4222")
	}
	gov := find[corev1.Service](ms, sts.Spec.ServiceName)
	if gov == nil || gov.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("serviceName %q: want a headless Service of that name", sts.Spec.ServiceName)
	}

	if !strings.HasPrefix(c.Image, "nats:2.11") {
		t.Errorf("image %s, want nats:2.11-alpine", c.Image)
	}
	args := strings.Join(append(slices.Clone(c.Command), c.Args...), " ")
	if !strings.Contains(" "+args+" ", " -js ") || !strings.Contains(args, "-sd /data") {
		t.Errorf("args %q: want -js -sd /data", args)
	}
	dataMounted := false
	for _, vm := range c.VolumeMounts {
		if vm.MountPath == "/data" {
			for _, claim := range sts.Spec.VolumeClaimTemplates {
				dataMounted = dataMounted || claim.Name == vm.Name
			}
		}
	}
	if !dataMounted {
		t.Errorf("/data must be a volumeClaimTemplate")
	}

	// The configuration comes from the ConfigMap, and holds every stream.
	conf := ""
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.ConfigMap == nil {
			continue
		}
		cm := find[corev1.ConfigMap](ms, v.ConfigMap.Name)
		for _, vm := range c.VolumeMounts {
			if vm.Name != v.Name || cm == nil {
				continue
			}
			for k, data := range cm.Data {
				if strings.Contains(args, path.Join(vm.MountPath, k)) {
					conf = data
				}
			}
		}
	}
	if conf == "" {
		t.Fatalf("args %q: no --config naming a file of a mounted ConfigMap", args)
	}
	store, err := natsSize(conf, "max_file_store")
	if err != nil {
		t.Fatal(err)
	}
	need := int64(len(events.Streams)) * streamMaxBytes
	if store < need {
		t.Errorf("max_file_store %d bytes: JetStream reserves %d streams x 4 GiB = %d bytes; the last streams would not be created", store, len(events.Streams), need)
	}
	for _, claim := range sts.Spec.VolumeClaimTemplates {
		q := claim.Spec.Resources.Requests[corev1.ResourceStorage]
		if q.Cmp(*resource.NewQuantity(store, resource.BinarySI)) < 0 {
			t.Errorf("volumeClaimTemplate %s: %s is smaller than max_file_store (%d bytes)", claim.Name, q.String(), store)
		}
	}
	if payload, err := natsSize(conf, "max_payload"); err != nil {
		t.Errorf("max_payload: %v (set it: bindings embed whole templates)", err)
	} else if payload != events.MaxPayload {
		t.Errorf("max_payload %d bytes, want events.MaxPayload (%d): validation refuses larger objects by that constant", payload, events.MaxPayload)
	}
}

// natsSize reads a size setting of a nats-server configuration file, with
// nats-server's units (k/m/g/t are powers of 1000; kb, ki, kib... of 1024).
func natsSize(conf, key string) (int64, error) {
	re := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(key) + `\s*[:=]?\s*([0-9]+)\s*([A-Za-z]*)\s*$`)
	m := re.FindStringSubmatch(conf)
	if m == nil {
		return 0, fmt.Errorf("%s is not set", key)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, err
	}
	mult := map[string]int64{"": 1, "b": 1,
		"k": 1e3, "kb": 1 << 10, "ki": 1 << 10, "kib": 1 << 10,
		"m": 1e6, "mb": 1 << 20, "mi": 1 << 20, "mib": 1 << 20,
		"g": 1e9, "gb": 1 << 30, "gi": 1 << 30, "gib": 1 << 30,
		"t": 1e12, "tb": 1 << 40, "ti": 1 << 40, "tib": 1 << 40}
	f, ok := mult[strings.ToLower(m[2])]
	if !ok {
		return 0, fmt.Errorf("%s: unknown unit %q", key, m[2])
	}
	return n * f, nil
}

// dockerfile is the instructions of a Dockerfile, continuation lines joined,
// grouped by stage.
type stage struct {
	from         string
	name         string
	instructions []string
}

func parseDockerfile(t *testing.T, file string) []stage {
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	var cur strings.Builder
	for line := range strings.SplitSeq(string(raw), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && cur.Len() == 0) {
			continue
		}
		if s, ok := strings.CutSuffix(trimmed, "\\"); ok {
			cur.WriteString(s + " ")
			continue
		}
		cur.WriteString(trimmed)
		if s := strings.TrimSpace(cur.String()); s != "" {
			lines = append(lines, s)
		}
		cur.Reset()
	}
	var stages []stage
	for _, l := range lines {
		fields := strings.Fields(l)
		if strings.EqualFold(fields[0], "FROM") {
			s := stage{}
			rest := slices.DeleteFunc(fields[1:], func(f string) bool { return strings.HasPrefix(f, "--") })
			if len(rest) > 0 {
				s.from = rest[0]
			}
			if len(rest) == 3 && strings.EqualFold(rest[1], "AS") {
				s.name = rest[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) > 0 {
			stages[len(stages)-1].instructions = append(stages[len(stages)-1].instructions, l)
		}
	}
	return stages
}

func instr(l string) (string, string) {
	op, rest, _ := strings.Cut(l, " ")
	return strings.ToUpper(op), strings.TrimSpace(rest)
}

func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, filepath.Join("docker", "Dockerfile"))
	if len(stages) < 2 {
		t.Fatalf("want a multi-stage build, got %d stage(s)", len(stages))
	}
	final := stages[len(stages)-1]
	if !strings.HasPrefix(final.from, "gcr.io/distroless/static") && final.from != "scratch" {
		t.Errorf("final stage FROM %s: want distroless/static or scratch (nothing but the static binary)", final.from)
	}
	user, entrypoint := "", ""
	var copied []string
	for _, l := range final.instructions {
		switch op, rest := instr(l); op {
		case "USER":
			user = rest
		case "ENTRYPOINT":
			entrypoint = rest
		case "COPY":
			copied = append(copied, rest)
		}
	}
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err != nil || n == 0 {
		t.Errorf("final stage USER %q: want a numeric non-root UID (Kubernetes' runAsNonRoot can only verify a numeric one)", user)
	}
	var ep []string
	if err := json.Unmarshal([]byte(entrypoint), &ep); err != nil || len(ep) == 0 || ep[0] != "/flotilla" {
		t.Errorf(`ENTRYPOINT %s: want ["/flotilla"] in exec form`, entrypoint)
	}

	// The binary the final stage copies is built with CGO_ENABLED=0.
	built := false
	for _, s := range stages[:len(stages)-1] {
		cgoOff := false
		for _, l := range s.instructions {
			op, rest := instr(l)
			if op == "ENV" && regexp.MustCompile(`\bCGO_ENABLED[= ]0\b`).MatchString(rest) {
				cgoOff = true
			}
			if op != "RUN" || !strings.Contains(rest, "go build") {
				continue
			}
			out := regexp.MustCompile(`-o\s+(\S+)`).FindStringSubmatch(rest)
			if !strings.Contains(rest, "./cmd/flotilla") || out == nil {
				continue
			}
			if !cgoOff && !strings.Contains(rest, "CGO_ENABLED=0") {
				t.Errorf("stage %s: %q builds without CGO_ENABLED=0", s.name, rest)
			}
			for _, cp := range copied {
				if strings.Contains(cp, "--from="+s.name) && strings.Contains(cp, out[1]) {
					built = true
				}
			}
		}
	}
	if !built {
		t.Errorf("the final stage does not COPY --from a stage that builds ./cmd/flotilla with go build -o")
	}
}

func repoRoot(t *testing.T) string {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("%s is not the module root: %v", root, err)
	}
	return root
}

// TestStaticBinary builds ./cmd/flotilla the way the Dockerfile does and
// checks that the result runs on distroless/static: no ELF interpreter and
// no shared libraries.
func TestStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the flotilla binary; skipped with -short")
	}
	root := repoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "cmd", "flotilla")); err != nil {
		t.Skipf("./cmd/flotilla does not exist yet: %v", err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	out := filepath.Join(t.TempDir(), "flotilla")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-trimpath", "-ldflags=-s -w", "-o", out, "./cmd/flotilla")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build ./cmd/flotilla: %v\n%s", err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary has a PT_INTERP program header: it needs a dynamic loader")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) > 0 {
		t.Errorf("the binary needs shared libraries (DT_NEEDED): %v", libs)
	}
}

// validateData validates data against the JSON Schema docs/schemas holds
// for t, as an outside publisher would.
func validateData(t *testing.T, typ events.Type, data []byte) error {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "docs", "schemas", schemas.FileName(typ)))
	if err != nil {
		return err
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(events.DataSchema(typ), doc); err != nil {
		return err
	}
	sch, err := c.Compile(events.DataSchema(typ))
	if err != nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	return sch.Validate(v)
}

var (
	headingRE = regexp.MustCompile(`(?m)^(#{2,3}) (.+?)\s*$`)
	blockRE   = regexp.MustCompile("(?ms)^```(text|json)\n(.*?)^```\\s*$")
	subjectRE = regexp.MustCompile("NATS\\s+subject\\s+`([^`]+)`")
)

// TestEventsDoc keeps docs/events.md in step with events.Catalogue: one
// "### <type>" section per type, in catalogue order, and examples that the
// real decoder accepts, whose data decodes into the payload type without
// unknown fields and whose subjects fit the catalogue.
func TestEventsDoc(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "events.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	type section struct {
		typ  string
		body string
	}
	var sections []section
	hs := headingRE.FindAllStringSubmatchIndex(doc, -1)
	for i, h := range hs {
		if doc[h[2]:h[3]] != "###" {
			continue
		}
		end := len(doc)
		if i+1 < len(hs) {
			end = hs[i+1][0]
		}
		sections = append(sections, section{doc[h[4]:h[5]], doc[h[1]:end]})
	}
	var got, want []string
	for _, s := range sections {
		got = append(got, s.typ)
	}
	for _, e := range events.Catalogue {
		want = append(want, string(e.Type))
	}
	if !slices.Equal(got, want) {
		t.Errorf("### headings of docs/events.md:\n got %q\nwant %q (events.Catalogue, in order)", got, want)
	}
	if diff := cmp.Diff(catalogueRows(), summaryRows(t, doc)); diff != "" {
		t.Errorf("the table under ## Catalogue of docs/events.md is not events.Catalogue, row for row (-want +got):\n%s", diff)
	}
	for _, s := range sections {
		entry, ok := events.Lookup(events.Type(s.typ))
		if !ok {
			continue
		}
		t.Run(s.typ, func(t *testing.T) { checkSection(t, entry, s.body) })
	}
}

// catalogueRows are the rows of the summary table under "## Catalogue"
// of docs/events.md, one per type of events.Catalogue, in its order: type
// (linked to its section), producer, subject, stream and meaning.
func catalogueRows() []string {
	var rows []string
	for _, e := range events.Catalogue {
		anchor := strings.ReplaceAll(string(e.Type), ".", "")
		rows = append(rows, fmt.Sprintf("| [`%s`](#%s) | %s | `%s` | `%s` | %s |", e.Type, anchor, e.Producer, e.Subject, e.Stream, e.Doc))
	}
	return rows
}

// summaryRows are the body rows of the first table under "## Catalogue".
func summaryRows(t *testing.T, doc string) []string {
	t.Helper()
	_, after, ok := strings.Cut(doc, "\n## Catalogue\n")
	if !ok {
		t.Fatal("docs/events.md has no ## Catalogue section")
	}
	var rows []string
	inTable := false
	for line := range strings.SplitSeq(after, "\n") {
		switch {
		case strings.HasPrefix(line, "|"):
			inTable = true
			if !strings.HasPrefix(line, "| Type ") && !strings.HasPrefix(line, "|---") {
				rows = append(rows, line)
			}
		case inTable:
			return rows
		}
	}
	return rows
}

func checkSection(t *testing.T, entry events.Entry, body string) {
	var stream *events.StreamSpec
	for i := range events.Streams {
		if events.Streams[i].Name == entry.Stream {
			stream = &events.Streams[i]
		}
	}
	if stream == nil {
		t.Fatalf("catalogue stream %s is not in events.Streams", entry.Stream)
	}
	pattern := regexp.MustCompile("^" + strings.NewReplacer(
		regexp.QuoteMeta("<key>"), `[^.]+\.[^.]+\.[^.]+\.[^.]+`,
		regexp.QuoteMeta("<cluster>"), `[^.]+`,
		regexp.QuoteMeta("<consumer>"), `[^.]+`,
	).Replace(regexp.QuoteMeta(entry.Subject)) + "$")
	var subjects []string
	for _, m := range subjectRE.FindAllStringSubmatch(body, -1) {
		subj := m[1]
		if strings.Contains(subj, "<") {
			continue // the pattern itself
		}
		subjects = append(subjects, subj)
		if !pattern.MatchString(subj) {
			t.Errorf("example subject %s does not fit %s", subj, entry.Subject)
		}
		if !slices.ContainsFunc(stream.Subjects, func(f string) bool { return subjectMatches(f, subj) }) {
			t.Errorf("example subject %s is not stored by %s %v", subj, stream.Name, stream.Subjects)
		}
	}
	if len(subjects) == 0 {
		t.Fatalf("no example: want \"NATS subject `...`\" with a text block of headers and a json block of data")
	}
	var headers, datas []string
	for _, m := range blockRE.FindAllStringSubmatch(body, -1) {
		if m[1] == "text" {
			headers = append(headers, m[2])
		} else {
			datas = append(datas, m[2])
		}
	}
	if len(headers) == 0 || len(headers) != len(datas) {
		t.Fatalf("%d header blocks and %d data blocks: want pairs", len(headers), len(datas))
	}
	for i := range headers {
		h := map[string]string{}
		var keys []string
		for line := range strings.SplitSeq(strings.TrimSpace(headers[i]), "\n") {
			k, v, ok := strings.Cut(line, ": ")
			if !ok {
				t.Errorf("example %d: header line %q is not `name: value`", i+1, line)
				continue
			}
			h[k] = v
			keys = append(keys, k)
		}
		e, err := events.FromHeaders(func(k string) string { return h[k] }, keys, []byte(datas[i]))
		if err != nil {
			t.Errorf("example %d: the decoder refuses it: %v", i+1, err)
			continue
		}
		if e.Type() != string(entry.Type) {
			t.Errorf("example %d: ce-type %s under the heading %s", i+1, e.Type(), entry.Type)
		}
		if h["Nats-Msg-Id"] != e.ID() {
			t.Errorf("example %d: Nats-Msg-Id %q, want the event id %q", i+1, h["Nats-Msg-Id"], e.ID())
		}
		if h["content-type"] != "application/json" {
			t.Errorf("example %d: content-type %q", i+1, h["content-type"])
		}
		if want := events.DataSchema(entry.Type); e.DataSchema() != want {
			t.Errorf("example %d: ce-dataschema %q, want %q", i+1, e.DataSchema(), want)
		}
		if err := validateData(t, entry.Type, e.Data()); err != nil {
			t.Errorf("example %d: data does not validate against docs/schemas/%s: %v", i+1, schemas.FileName(entry.Type), err)
		}
		subj := subjects[min(i, len(subjects)-1)]
		switch {
		case strings.Contains(entry.Subject, "<key>"):
			k, err := events.ParseSubjectKey(subj)
			if err != nil || k.String() != e.Subject() {
				t.Errorf("example %d: ce-subject %q, but NATS subject %s names %q", i+1, e.Subject(), subj, k.String())
			}
		case strings.Contains(entry.Subject, "<cluster>"):
			if tok := subj[strings.LastIndex(subj, ".")+1:]; events.ClusterToken(e.Subject()) != tok {
				t.Errorf("example %d: ce-subject %q, but NATS subject %s names cluster %q", i+1, e.Subject(), subj, tok)
			}
		}
		v := events.Payload(entry.Type)
		if v == nil {
			t.Fatalf("no payload type for %s (events.Payload)", entry.Type)
		}
		dec := json.NewDecoder(bytes.NewReader(e.Data()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Errorf("example %d: data does not decode into %T: %v", i+1, v, err)
		}
		if obj, ok := v.(*events.KubernetesObject); ok {
			md, _ := (*obj)["metadata"].(map[string]any)
			if (*obj)["apiVersion"] == nil || (*obj)["kind"] == nil || md["name"] == nil {
				t.Errorf("example %d: data is not a Kubernetes object (apiVersion, kind, metadata.name)", i+1)
			}
		}
	}
}

// subjectMatches reports whether the NATS subject filter f (with * and >)
// matches subject s.
func subjectMatches(f, s string) bool {
	ft, st := strings.Split(f, "."), strings.Split(s, ".")
	for i, tok := range ft {
		switch {
		case tok == ">":
			return len(st) > i
		case i >= len(st):
			return false
		case tok != "*" && tok != st[i]:
			return false
		}
	}
	return len(ft) == len(st)
}
