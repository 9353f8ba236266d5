package hubd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/events/sealing"
	"github.com/flotilla-io/flotilla/hubd/mirror"
	"github.com/flotilla-io/flotilla/internal/member"
	"github.com/flotilla-io/flotilla/readmodel"
)

// work handles the queued hub objects one at a time until the queue shuts
// down; a failed publish is retried with the queue's back-off.
func (d *Daemon) work(ctx context.Context) {
	for {
		it, quit := d.queue.Get()
		if quit {
			return
		}
		if err := d.handle(ctx, it); err != nil && ctx.Err() == nil {
			d.log.Warn("publish failed; retrying", zap.String("resource", it.gvr.String()), zap.String("namespace", it.namespace),
				zap.String("name", it.name), zap.Error(err))
			d.queue.AddRateLimited(it)
		} else {
			d.queue.Forget(it)
		}
		d.queue.Done(it)
	}
}

// handle publishes what the hub object it has become: object.applied when
// its content differs from the bus's accepted row and from what hubd last
// sent, object.deleted when it is gone from the hub and the bus holds it.
func (d *Daemon) handle(ctx context.Context, it item) error {
	inf, ok := d.informers[it.gvr]
	if !ok {
		return nil
	}
	storeKey := it.name
	if it.namespace != "" {
		storeKey = it.namespace + "/" + it.name
	}
	raw, exists, err := inf.GetStore().GetByKey(storeKey)
	if err != nil {
		return err
	}
	if !exists {
		r := d.resourceOf(it)
		d.mu.Lock()
		delete(d.refused, events.KeyOf(r.gvr.GroupVersion().String(), r.kind, it.namespace, it.name))
		d.mu.Unlock()
		return d.publishDeletion(ctx, r.gvr.GroupVersion().String(), r.kind, it.namespace, it.name)
	}
	u, ok := raw.(*unstructured.Unstructured)
	if !ok {
		return nil
	}
	if it.gvr == clusterGVR {
		// Its credentials may have been looked at before the Cluster
		// named them: look again.
		for key := range policy.CredentialSecretsIn(func(yield func(map[string]any) bool) { yield(u.Object) }) {
			ns, name, _ := strings.Cut(key, "/")
			d.queue.Add(item{secretGVR, ns, name})
		}
	}
	return d.publishApplied(ctx, u.Object)
}

func (d *Daemon) resourceOf(it item) resource {
	for _, r := range d.kinds {
		if r.gvr == it.gvr {
			return r
		}
	}
	return resource{gvr: it.gvr}
}

// publishApplied publishes obj as `flotilla apply` would, unless the bus
// holds it already or hubd sent it last.
func (d *Daemon) publishApplied(ctx context.Context, obj map[string]any) error {
	credentials := d.credentials()
	d.mu.Lock()
	out, skip := mirror.Input(obj, d.watched, credentials)
	if skip != "" {
		d.mu.Unlock()
		d.metrics.inputs.WithLabelValues("skipped").Inc()
		return nil
	}
	k := mirror.Key(out)
	norm, problems := mirror.Validate(out)
	if len(problems) > 0 {
		// Refused here, as flotilla apply refuses the file: nothing is
		// published; the write-back reports it on the hub object.
		d.metrics.inputs.WithLabelValues("refused").Inc()
		if _, known := d.refused[k]; !known {
			d.refused[k] = refusal{problems: problems, id: refusalID(problems), at: time.Now()}
			d.log.Info("refused", zap.String("subject", k.String()), zap.String("problems", mirror.Problems(problems)))
		}
		d.mu.Unlock()
		return nil
	}
	delete(d.refused, k)
	out = norm
	body, err := json.Marshal(out)
	if err != nil {
		d.mu.Unlock()
		return err
	}
	if last, ok := d.sent[k.String()]; (ok && readmodel.SameJSON([]byte(last), body)) || d.published.Unchanged(k, out) {
		d.mu.Unlock()
		d.metrics.inputs.WithLabelValues("unchanged").Inc()
		return nil
	}
	d.mu.Unlock()
	var e events.Event
	outcome := "published"
	if mirror.IsCredentials(out, credentials) {
		outcome = "sealed"
		if e, err = d.sealed(ctx, k, out); err != nil {
			return err
		}
	} else if e, err = events.New(events.TypeObjectApplied, d.Source(), k.String(), out); err != nil {
		return err
	}
	if err := d.publish(ctx, k, e); err != nil {
		return err
	}
	d.mu.Lock()
	d.sent[k.String()] = string(body)
	d.mu.Unlock()
	d.metrics.inputs.WithLabelValues(outcome).Inc()
	d.log.Info("published", zap.String("event_type", e.Type()), zap.String("subject", k.String()), zap.String("event_id", e.ID()))
	return nil
}

// refusalID names a set of problems: the same problems, the same Warning
// Event.
func refusalID(problems []events.FieldError) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(mirror.Problems(problems)))
	return fmt.Sprintf("%08x", h.Sum32())
}

// credentials are the Secrets (namespace/name) the hub's Clusters name.
func (d *Daemon) credentials() map[string]bool {
	inf, ok := d.informers[clusterGVR]
	if !ok {
		return nil
	}
	return policy.CredentialSecretsIn(func(yield func(map[string]any) bool) {
		for _, raw := range inf.GetStore().List() {
			if u, ok := raw.(*unstructured.Unstructured); ok && !yield(u.Object) {
				return
			}
		}
	})
}

// sealed is the secret.sealed event for a credentials Secret on the hub:
// its values sealed to the announced credentials key, as flotilla apply
// seals them. The plain values never leave this process.
func (d *Daemon) sealed(ctx context.Context, k events.ObjectKey, secret map[string]any) (events.Event, error) {
	key, err := d.sealKey(ctx)
	if err != nil {
		return events.Event{}, err
	}
	values, err := member.SecretValues(secret)
	if err != nil {
		return events.Event{}, fmt.Errorf("%s: %w", k, err)
	}
	data, err := member.SealValues(values, key, ".")
	if err != nil {
		return events.Event{}, err
	}
	return events.New(events.TypeSecretSealed, d.Source(), k.String(), events.SealedSecret{Namespace: k.Namespace, Name: k.Name, KeyID: key.ID, Data: data})
}

// sealKey is the credentials key healthd or executord announced.
func (d *Daemon) sealKey(ctx context.Context) (*sealing.Key, error) {
	key, err := d.bus.SealKey(ctx)
	if err != nil || key != nil {
		return key, err
	}
	return nil, errors.New("no credentials key has been announced yet (healthd or executord announce it)")
}

// publishDeletion publishes object.deleted for an object gone from the
// hub, when the bus holds it or hubd sent it.
func (d *Daemon) publishDeletion(ctx context.Context, apiVersion, kind, namespace, name string) error {
	if kind == "" {
		return nil
	}
	k := events.KeyOf(apiVersion, kind, namespace, name)
	d.mu.Lock()
	_, held := d.published.Records[k]
	last, sent := d.sent[k.String()]
	d.mu.Unlock()
	if (!held && !sent) || (sent && last == "") {
		return nil
	}
	e, err := events.New(events.TypeObjectDeleted, d.Source(), k.String(), readmodel.Identity(apiVersion, kind, namespace, name))
	if err != nil {
		return err
	}
	if err := d.publish(ctx, k, e); err != nil {
		return err
	}
	d.mu.Lock()
	d.sent[k.String()] = ""
	d.mu.Unlock()
	d.metrics.inputs.WithLabelValues("deleted").Inc()
	d.log.Info("published", zap.String("event_type", e.Type()), zap.String("subject", k.String()), zap.String("event_id", e.ID()))
	return nil
}

func (d *Daemon) publish(ctx context.Context, k events.ObjectKey, e events.Event) error {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return d.bus.Publish(pctx, events.InputSubject(k), e)
}

// reconcileDeletions publishes object.deleted for every object the bus
// holds whose latest input came from a hubd and which the hub no longer
// has: deleted while hubd was down. Objects last written by anyone else
// (`flotilla apply`) are not hubd's to delete.
func (d *Daemon) reconcileDeletions(ctx context.Context) error {
	onHub := map[events.ObjectKey]bool{}
	for _, inf := range d.informers {
		for _, raw := range inf.GetStore().List() {
			if u, ok := raw.(*unstructured.Unstructured); ok {
				onHub[mirror.Key(u.Object)] = true
			}
		}
	}
	d.mu.Lock()
	records, ours := d.published.Records, d.ours
	d.mu.Unlock()
	for k, id := range ours {
		if _, held := records[k]; !held || onHub[k] {
			continue
		}
		d.log.Info("deleted on the hub while hubd was down", zap.String("subject", k.String()))
		if err := d.publishDeletion(ctx, id.APIVersion, id.Kind, id.Metadata.Namespace, id.Metadata.Name); err != nil {
			return err
		}
	}
	return nil
}

// refresh reads the bus's accepted state and the latest input of every
// object: what was last applied (by anyone) is what hubd compares the hub
// with, since policyd normalises what it accepts (a selector gains its
// namespace) and a rejected object has no accepted row to compare with.
func (d *Daemon) refresh(ctx context.Context) error {
	p, err := readmodel.ReadPublished(ctx, latestReader(d.bus))
	if err != nil {
		return err
	}
	inputs, err := d.bus.LatestPerSubject(ctx, events.StreamInput, events.AllInput)
	if err != nil {
		return err
	}
	sent, ours := map[string]string{}, map[events.ObjectKey]readmodel.ObjectIdentity{}
	for _, m := range inputs {
		if m.Err != nil {
			continue
		}
		var id readmodel.ObjectIdentity
		if events.Decode(m.Event, &id) != nil {
			continue
		}
		k := id.Key()
		switch events.Type(m.Event.Type()) {
		case events.TypeObjectApplied:
			sent[k.String()] = string(m.Event.Data())
			if strings.HasPrefix(m.Event.Source(), "/hubd/") {
				ours[k] = id
			}
		case events.TypeObjectDeleted:
			sent[k.String()] = ""
		}
	}
	d.mu.Lock()
	d.published, d.sent, d.ours = p, sent, ours
	d.mu.Unlock()
	return nil
}

// latestReader reads the latest rows of bus for the read model.
func latestReader(bus *natsbus.Bus) readmodel.LatestReader {
	return func(ctx context.Context, stream, filter string) ([]readmodel.Stored, error) {
		ms, err := bus.LatestPerSubject(ctx, stream, filter)
		out := make([]readmodel.Stored, 0, len(ms))
		for _, m := range ms {
			out = append(out, readmodel.Stored{Event: m.Event, Sequence: m.Sequence, Time: m.Time, Err: m.Err})
		}
		return out, err
	}
}
