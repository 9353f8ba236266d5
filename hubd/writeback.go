package hubd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/hubd/mirror"
	"github.com/flotilla-io/flotilla/readmodel"
)

var (
	rbGVR      = schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "resourcebindings"}
	crbGVR     = schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "clusterresourcebindings"}
	clusterGVR = schema.GroupVersionResource{Group: "cluster.karmada.io", Version: "v1alpha1", Resource: "clusters"}
	eventGVR   = schema.GroupVersionResource{Version: "v1", Resource: "events"}
	secretGVR  = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// writeBackLoop writes the bus's state back to the hub every Interval
// until ctx is done; a failed round is logged and the next one tries again.
func (d *Daemon) writeBackLoop(ctx context.Context) {
	written := newWriteLog()
	t := time.NewTicker(d.cfg.Interval)
	defer t.Stop()
	for {
		if err := d.writeBack(ctx, written); err != nil && ctx.Err() == nil {
			d.log.Warn("write-back round failed", zap.Error(err))
			d.metrics.writeBacks.WithLabelValues("failed").Inc()
		} else {
			d.metrics.writeBacks.WithLabelValues("ok").Inc()
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// writeBack is one round: it reads the fleet as `flotilla get` does and
// writes what changed since the last round (written: what each hub object
// was last given).
func (d *Daemon) writeBack(ctx context.Context, written *writeLog) error {
	read := latestReader(d.bus)
	f, err := readmodel.ReadFleet(ctx, read)
	if err != nil {
		return err
	}
	rejected, err := read(ctx, events.StreamPolicy, events.AllRejected)
	if err != nil {
		return err
	}
	d.mu.Lock()
	d.published = f.Published
	d.mu.Unlock()
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	index := f.TemplateIndex()
	bindings := map[string]bool{}
	var errs []string
	note := func(err error) {
		// A namespace being deleted takes no new binding or event: its
		// templates go with it.
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
			errs = append(errs, err.Error())
		}
	}
	// A policyd rejection counts while it is newer than the accepted
	// record; a refusal of hubd's own validator while the hub holds the
	// refused content.
	refusals := map[events.ObjectKey]refusal{}
	for _, m := range rejected {
		var r events.Rejection
		if m.Err == nil && events.Decode(m.Event, &r) == nil && f.Published.Records[r.Key].UpdatedAt.Before(m.Time) {
			refusals[r.Key] = refusal{problems: r.Problems, id: fmt.Sprint(m.Sequence), at: m.Time}
		}
	}
	d.mu.Lock()
	for k, r := range d.refused {
		refusals[k] = r
	}
	d.mu.Unlock()
	managed, err := d.managedBindings(ctx)
	if err != nil {
		return err
	}
	defer written.sweep()
	hubClusters := map[string]string{} // name -> UID
	for gvr, inf := range d.informers {
		for _, raw := range inf.GetStore().List() {
			u, ok := raw.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			if gvr == clusterGVR {
				hubClusters[u.GetName()] = string(u.GetUID())
			}
			out, skip := mirror.Input(u.Object, d.watched, nil)
			if skip != "" {
				continue
			}
			k := mirror.Key(out)
			r, isRefused := refusals[k]
			if isRefused {
				note(d.warn(ctx, u, r, written))
			}
			if gvr.Group == "policy.karmada.io" {
				if !isRefused && f.Published.Records[k].Role == "" {
					continue // not answered yet
				}
				var problems []events.FieldError
				if isRefused {
					problems = r.problems
				}
				conds := written.keepTransitions("policy/"+k.String(), mirror.PolicyConditions(problems, now))
				note(d.applyStatus(ctx, gvr, u, map[string]any{"conditions": conds}, written))
				continue
			}
			if gvr == clusterGVR {
				continue
			}
			t, placed := index[k]
			if !placed || t.Placement.Generation == 0 {
				continue
			}
			if st, ok := mirror.TemplateStatus(u.Object, t, f.Published.Unchanged(k, out)); ok {
				note(d.applyStatus(ctx, gvr, u, st, written))
			}
			rb := mirror.Binding(t, mirror.ObjectReference{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(),
				Name: u.GetName(), UID: string(u.GetUID()), ResourceVersion: u.GetResourceVersion()}, now)
			bindings[rb.Namespace+"/"+rb.Name] = true
			rb.Status.Conditions = written.keepTransitions("binding/"+rb.Namespace+"/"+rb.Name, rb.Status.Conditions)
			note(d.applyBinding(ctx, rb, managed[bindingKey(rb.Namespace, rb.Name)].uid, written))
		}
	}
	for _, c := range f.Clusters {
		note(d.applyCluster(ctx, c, hubClusters[c.Registration.Name], now, written))
	}
	note(d.collect(ctx, f.Clusters, bindings, managed, written))
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// apply server-side-applies obj (the status subresource when status).
func (d *Daemon) apply(ctx context.Context, gvr schema.GroupVersionResource, namespace, name string, obj any, status bool) error {
	body, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var sub []string
	if status {
		sub = []string{"status"}
	}
	force := true
	_, err = d.client.Resource(gvr).Namespace(namespace).Patch(ctx, name, types.ApplyPatchType, body,
		metav1.PatchOptions{FieldManager: mirror.FieldManager, Force: &force}, sub...)
	return err
}

// applyStatus writes status on the hub object u, when it changed.
func (d *Daemon) applyStatus(ctx context.Context, gvr schema.GroupVersionResource, u *unstructured.Unstructured, status any, written *writeLog) error {
	key := "status/" + gvr.String() + "/" + u.GetNamespace() + "/" + u.GetName()
	if !written.changed(key, string(u.GetUID()), status) {
		return nil
	}
	obj := map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(),
		"metadata": map[string]any{"name": u.GetName(), "namespace": u.GetNamespace()}, "status": status}
	if err := d.apply(ctx, gvr, u.GetNamespace(), u.GetName(), obj, true); err != nil {
		written.forget(key)
		return fmt.Errorf("status of %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return nil
}

// applyBinding writes a ResourceBinding (ClusterResourceBinding) and its
// status, when they changed or the hub lost it (uid: the one on the hub,
// "" for none).
func (d *Daemon) applyBinding(ctx context.Context, rb mirror.ResourceBinding, uid string, written *writeLog) error {
	gvr := rbGVR
	if rb.Namespace == "" {
		gvr = crbGVR
	}
	key := bindingKey(rb.Namespace, rb.Name)
	if !written.changed(key, uid, rb) {
		return nil
	}
	spec := rb
	spec.Status = mirror.ResourceBindingStatus{}
	if err := d.apply(ctx, gvr, rb.Namespace, rb.Name, spec, false); err != nil {
		written.forget(key)
		return fmt.Errorf("%s %s/%s: %w", rb.Kind, rb.Namespace, rb.Name, err)
	}
	st := map[string]any{"apiVersion": rb.APIVersion, "kind": rb.Kind, "metadata": map[string]any{"name": rb.Name, "namespace": rb.Namespace}, "status": rb.Status}
	if err := d.apply(ctx, gvr, rb.Namespace, rb.Name, st, true); err != nil {
		written.forget(key)
		return fmt.Errorf("status of %s %s/%s: %w", rb.Kind, rb.Namespace, rb.Name, err)
	}
	return nil
}

// applyCluster writes a member's Cluster (when the hub has none: it was
// joined with flotilla join, or its Cluster was deleted on the hub) and its
// status. uid is the hub's Cluster's ("" for none).
func (d *Daemon) applyCluster(ctx context.Context, c readmodel.Cluster, uid string, now metav1.Time, written *writeLog) error {
	name := c.Registration.Name
	if uid == "" {
		obj := mirror.ClusterObject(c)
		if err := d.apply(ctx, clusterGVR, "", name, obj, false); err != nil {
			return fmt.Errorf("Cluster %s: %w", name, err)
		}
	}
	st := mirror.ClusterStatus(c, now)
	st.Conditions = written.keepTransitions("cluster/"+name, st.Conditions)
	key := "status/cluster/" + name
	if !written.changed(key, uid, st) {
		return nil
	}
	obj := map[string]any{"apiVersion": policy.ClusterAPIVersion, "kind": policy.KindCluster, "metadata": map[string]any{"name": name}, "status": st}
	if err := d.apply(ctx, clusterGVR, "", name, obj, true); err != nil {
		written.forget(key)
		return fmt.Errorf("status of Cluster %s: %w", name, err)
	}
	return nil
}

// bindingKey is the write-log key of a ResourceBinding (namespace "":
// a ClusterResourceBinding).
func bindingKey(namespace, name string) string { return "binding/" + namespace + "/" + name }

// managedSelector selects what hubd wrote on the hub.
var managedSelector = metav1.ListOptions{LabelSelector: mirror.ManagedByLabel + "=" + mirror.ManagedByHubd}

// hubObject names an object on the hub.
type hubObject struct {
	gvr             schema.GroupVersionResource
	namespace, name string
	uid             string
}

// managedBindings are the ResourceBindings and ClusterResourceBindings
// hubd wrote that the hub holds, by bindingKey.
func (d *Daemon) managedBindings(ctx context.Context) (map[string]hubObject, error) {
	out := map[string]hubObject{}
	for _, gvr := range []schema.GroupVersionResource{rbGVR, crbGVR} {
		l, err := d.client.Resource(gvr).Namespace("").List(ctx, managedSelector)
		if err != nil {
			return nil, err
		}
		for _, u := range l.Items {
			out[bindingKey(u.GetNamespace(), u.GetName())] = hubObject{gvr, u.GetNamespace(), u.GetName(), string(u.GetUID())}
		}
	}
	return out, nil
}

// collect deletes what hubd wrote and no longer stands: bindings of
// templates no longer placed (managed: those on the hub), Clusters of
// members no longer registered.
func (d *Daemon) collect(ctx context.Context, clusters []readmodel.Cluster, bindings map[string]bool, managed map[string]hubObject, written *writeLog) error {
	for key, o := range managed {
		if bindings[o.namespace+"/"+o.name] {
			continue
		}
		written.forget(key)
		if err := d.client.Resource(o.gvr).Namespace(o.namespace).Delete(ctx, o.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	members := map[string]bool{}
	for _, c := range clusters {
		members[c.Registration.Name] = true
	}
	l, err := d.client.Resource(clusterGVR).List(ctx, managedSelector)
	if err != nil {
		return err
	}
	for _, u := range l.Items {
		if members[u.GetName()] {
			continue
		}
		written.forget("status/cluster/" + u.GetName())
		if err := d.client.Resource(clusterGVR).Delete(ctx, u.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// refusal is why an object on the hub is not accepted: policyd's
// rejection or hubd's own validator's, with an id naming it once.
type refusal struct {
	problems []events.FieldError
	id       string
	at       time.Time
}

// warn records the refusal r of the hub object u as a Warning Event on
// it, once per refusal (the event's name carries r's id).
func (d *Daemon) warn(ctx context.Context, u *unstructured.Unstructured, r refusal, written *writeLog) error {
	ns := u.GetNamespace()
	if ns == "" {
		ns = "default"
	}
	name := fmt.Sprintf("%s.flotilla-%s", u.GetName(), r.id)
	if written.done("event/" + ns + "/" + name) {
		return nil
	}
	at := r.at.UTC().Format(time.RFC3339)
	ev := map[string]any{
		"apiVersion": "v1", "kind": "Event",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{mirror.ManagedByLabel: mirror.ManagedByHubd}},
		"involvedObject": map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "name": u.GetName(),
			"namespace": u.GetNamespace(), "uid": string(u.GetUID())},
		"type": "Warning", "reason": mirror.ReasonValidationRejected, "message": "not accepted: " + mirror.Problems(r.problems),
		"source": map[string]any{"component": mirror.FieldManager}, "firstTimestamp": at, "lastTimestamp": at, "count": int64(1),
		"reportingComponent": mirror.FieldManager, "reportingInstance": d.Source(),
	}
	_, err := d.client.Resource(eventGVR).Namespace(ns).Create(ctx, &unstructured.Unstructured{Object: ev}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("event on %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	written.record("event/" + ns + "/" + name)
	return nil
}
