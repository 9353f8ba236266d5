package hubd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/hubd/mirror"
	"github.com/flotilla-io/flotilla/readmodel"
)

// Deps are hubd's edges.
type Deps struct {
	Bus *natsbus.Bus
	Log *zap.Logger
	// Hub overrides the REST config read from Config.HubKubeconfig.
	Hub *rest.Config
	// Registry takes hubd's metrics (nil: none).
	Registry prometheus.Registerer
}

// Daemon is hubd.
type Daemon struct {
	cfg     Config
	bus     *natsbus.Bus
	log     *zap.Logger
	client  dynamic.Interface
	disco   discovery.DiscoveryInterface
	watched func(string) bool
	queue   workqueue.TypedRateLimitingInterface[item]
	metrics *metrics

	mu sync.Mutex
	// informers by resource; fixed once Run has discovered the hub.
	informers map[schema.GroupVersionResource]cache.SharedIndexInformer
	// kinds maps group/Kind to its resource, for the objects the bus names.
	kinds map[string]resource
	// published is the bus's accepted state as last read.
	published readmodel.Published
	// sent is the latest input per key as hubd knows it: read from the
	// bus at start, then what hubd publishes ("" for a deletion). An
	// object equal to it is not published again.
	sent map[string]string
	// refused are the hub objects hubd's validator refused, by key.
	refused map[events.ObjectKey]refusal
	// ours are the objects whose latest input at start came from a hubd.
	ours map[events.ObjectKey]readmodel.ObjectIdentity
}

// resource is one watched API resource.
type resource struct {
	gvr        schema.GroupVersionResource
	kind       string
	namespaced bool
}

// item is a hub object to look at: its resource and name.
type item struct {
	gvr             schema.GroupVersionResource
	namespace, name string
}

// New returns a hubd; it connects to the hub in Run.
func New(cfg Config, deps Deps) (*Daemon, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rc := deps.Hub
	if rc == nil {
		raw, err := os.ReadFile(cfg.HubKubeconfig)
		if err != nil {
			return nil, fmt.Errorf("--hub-kubeconfig: %w", err)
		}
		if rc, err = clientcmd.RESTConfigFromKubeConfig(raw); err != nil {
			return nil, fmt.Errorf("--hub-kubeconfig %s: %w", cfg.HubKubeconfig, err)
		}
	}
	rc = rest.CopyConfig(rc)
	rc.QPS, rc.Burst, rc.UserAgent = 50, 100, "flotilla-hubd"
	client, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	disco, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return nil, err
	}
	return &Daemon{cfg: cfg, bus: deps.Bus, log: deps.Log.Named("hubd"), client: client, disco: disco, metrics: newMetrics(deps.Registry),
		watched:   mirror.WatchedNamespaces(cfg.Namespaces),
		queue:     workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[item]()),
		informers: map[schema.GroupVersionResource]cache.SharedIndexInformer{}, kinds: map[string]resource{},
		sent: map[string]string{}, refused: map[events.ObjectKey]refusal{}, published: readmodel.NewPublished()}, nil
}

// Source is the source of the events hubd publishes.
func (d *Daemon) Source() string { return "/hubd/" + d.cfg.Instance }

// Run mirrors until ctx is done: it discovers the hub's resources, fills
// the informer caches, reads the bus, publishes the deletions it missed
// while it was down, then publishes every change on the hub and writes the
// bus's state back every Interval.
func (d *Daemon) Run(ctx context.Context) error {
	defer d.queue.ShutDown()
	resources, err := d.discover()
	if err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(d.client, 0)
	for _, r := range resources {
		inf := factory.ForResource(r.gvr).Informer()
		gvr := r.gvr
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(obj any) { d.enqueue(gvr, obj) },
			UpdateFunc: func(_, obj any) { d.enqueue(gvr, obj) },
			DeleteFunc: func(obj any) { d.enqueue(gvr, obj) },
		})
		d.informers[r.gvr] = inf
		d.kinds[r.gvr.Group+"/"+r.kind] = r
	}
	factory.Start(ctx.Done())
	for gvr, inf := range d.informers {
		if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
			return fmt.Errorf("hub: %s: caches not filled: %w", gvr, ctx.Err())
		}
	}
	if err := d.refresh(ctx); err != nil {
		return err
	}
	if err := d.reconcileDeletions(ctx); err != nil {
		return err
	}
	d.log.Info("hubd ready", zap.Int("resources", len(d.informers)))
	var wg sync.WaitGroup
	wg.Go(func() { d.work(ctx) })
	wg.Go(func() { d.writeBackLoop(ctx) })
	<-ctx.Done()
	d.queue.ShutDown()
	wg.Wait()
	return nil
}

// discover lists the hub's resources hubd watches: every namespaced one
// that can be listed and watched, but what mirror.WatchedResource leaves
// out, and the cluster-scoped inputs (policies, Clusters).
func (d *Daemon) discover() ([]resource, error) {
	lists, err := d.disco.ServerPreferredResources()
	if err != nil && len(lists) == 0 {
		return nil, err
	}
	var out []resource
	for _, l := range lists {
		gv, perr := schema.ParseGroupVersion(l.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !has(r.Verbs, "list") || !has(r.Verbs, "watch") || !mirror.WatchedResource(gv.Group, r.Name) {
				continue
			}
			if !r.Namespaced && !mirror.ClusterScopedInputs[gv.String()+"/"+r.Kind] {
				continue
			}
			out = append(out, resource{gvr: gv.WithResource(r.Name), kind: r.Kind, namespaced: r.Namespaced})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no resources to watch (%v)", err)
	}
	return out, nil
}

func has(verbs []string, v string) bool {
	for _, x := range verbs {
		if x == v {
			return true
		}
	}
	return false
}

func (d *Daemon) enqueue(gvr schema.GroupVersionResource, obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	d.queue.Add(item{gvr, ns, name})
}
