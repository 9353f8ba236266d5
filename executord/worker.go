package executord

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/internal/member"
)

// worker serves one member cluster.
type worker struct {
	member.Task
	d      *Daemon
	name   string
	reg    events.ClusterRegistration // push mode: labels/spec for override targeting
	log    *zap.Logger
	dyn    dynamic.Interface
	kube   kubernetes.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	mu     sync.Mutex
	work   map[events.ObjectKey]events.WorkStatus        // last status published per template
	placed map[events.ObjectKey]events.PlacementDecision // last placement seen per template
	// namespaces known to exist in the member (saves a read per apply).
	namespaces map[string]bool
	// depsOf lists the dependencies applied with each template (propagateDeps).
	depsOf map[events.ObjectKey][]events.ObjectKey
	// desired is the manifest last applied per template, for drift checks.
	desired map[events.ObjectKey]map[string]any
	// held are the applies and removals the member could not take yet,
	// retried by the resync loop (see held.go).
	held map[events.ObjectKey]*held
	// awaiting are the CRDs whose removal waits for the custom resources
	// of their kind here (definitions.go).
	awaiting map[events.ObjectKey]definedKind
	// consumer is set once the cluster's durable consumer is bound.
	consumer atomic.Pointer[natsbus.Consumer]
}

func newWorker(d *Daemon, name string, reg events.ClusterRegistration, rc *rest.Config) (*worker, error) {
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	return &worker{d: d, name: name, reg: reg, log: d.deps.Log.With(zap.String("cluster", name)), dyn: dyn, kube: kube,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(kube.Discovery())),
		work:   map[events.ObjectKey]events.WorkStatus{}, placed: map[events.ObjectKey]events.PlacementDecision{},
		desired: map[events.ObjectKey]map[string]any{}, depsOf: map[events.ObjectKey][]events.ObjectKey{}, namespaces: map[string]bool{},
		held: map[events.ObjectKey]*held{}, awaiting: map[events.ObjectKey]definedKind{}}, nil
}

// ConsumerFor names the durable consumer that serves a cluster.
func ConsumerFor(cluster string) string { return "executord-" + events.ClusterToken(cluster) }

// Run serves the cluster until ctx is done, while this instance owns it
// (Daemon.gate): a standby's worker waits, and one whose lease is lost
// stops and waits again. An error that ends it sooner is logged.
func (w *worker) Run(ctx context.Context) {
	w.d.gate.Serve(ctx, w.name, func(ctx context.Context) {
		if err := w.run(ctx); err != nil && ctx.Err() == nil {
			w.log.Error("cluster worker stopped", zap.Error(err))
		}
	})
}

func (w *worker) run(ctx context.Context) error {
	bus := w.d.deps.Bus
	if w.d.gate != nil {
		// Another instance may have served the cluster since this worker
		// last did (or since the rebuild): its work records are the last
		// ones published.
		if err := w.reload(ctx); err != nil {
			return err
		}
		w.log.Info("serving cluster")
	}
	// Catch up first with the latest placement of every template: after a
	// restart this finishes what a crash interrupted (applies are skipped
	// when the member already holds the rendered manifest), and holds again
	// what the member cannot take yet.
	stream, filter := placementSource(w.d.cfg, w.name)
	if err := bus.HandleLatest(ctx, stream, w.HandlePlacement, filter); err != nil {
		return err
	}
	c, err := bus.Bind(ctx, placementConsumer(w.d.cfg, w.name))
	if err != nil {
		return err
	}
	w.consumer.Store(c)
	rctx, cancel := context.WithCancel(ctx)
	resynced := make(chan struct{})
	go func() {
		defer close(resynced)
		w.resyncLoop(rctx)
	}()
	err = c.Run(ctx, w.HandlePlacement)
	cancel()
	<-resynced
	return err
}

// reload replaces the worker's work records with the latest published
// for its cluster, whoever published them.
func (w *worker) reload(ctx context.Context) error {
	ms, err := w.d.deps.Bus.LatestPerSubject(ctx, events.StreamWork, events.WorkOf(w.name))
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range ms {
		var s events.WorkStatus
		if m.Err == nil && events.Decode(m.Event, &s) == nil && s.Cluster == w.name {
			w.work[s.Key] = s
		}
	}
	return nil
}

func (w *worker) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil && meta.IsNoMatchError(err) {
		w.mapper.Reset()
		m, err = w.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	switch {
	case meta.IsNoMatchError(err):
		return nil, fmt.Errorf("%s is not served by %s: %w", gvk, w.name, err)
	case err != nil:
		return nil, fmt.Errorf("discovery of %s in %s: %w", gvk.GroupKind(), w.name, err)
	}
	return m, nil
}

func (w *worker) resource(m *meta.RESTMapping, ns string) dynamic.ResourceInterface {
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return w.dyn.Resource(m.Resource).Namespace(ns)
	}
	return w.dyn.Resource(m.Resource)
}

func (w *worker) ensureNamespace(ctx context.Context, ns string) error {
	if ns == "" {
		return nil
	}
	if w.namespaces[ns] {
		return nil
	}
	_, err := w.kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = w.kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{FieldManager: FieldManager})
		if apierrors.IsAlreadyExists(err) {
			err = nil
		}
	}
	if err == nil {
		w.namespaces[ns] = true
	}
	return err
}

// resyncLoop retries the held operations, then reads back the status of
// every object this cluster holds and re-applies objects removed or
