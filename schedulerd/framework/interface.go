package framework

// Plugin is what every plugin has: a name, used in diagnoses
// ("<Name>: <reason>") and as its state key.
type Plugin interface {
	Name() string
}

// FilterPlugin decides whether a cluster is feasible for the request.
// Return nil (or a Success status) to pass; Unschedulable with a reason a
// user can act on to filter the cluster out. Filter must not modify its
// arguments and must be safe for concurrent use.
type FilterPlugin interface {
	Plugin
	Filter(req *Request, c *ClusterInfo) *Status
}

// BatchFilterPlugin is optional for filter plugins: FilterAll answers for
// every cluster of a decision in one call, statuses[i] being what
// Filter(req, clusters[i]) returns (statuses comes zeroed: nil is
// Success). It spares the scheduler a dynamic call per cluster and plugin;
// its answers must be exactly Filter's.
type BatchFilterPlugin interface {
	FilterPlugin
	FilterAll(req *Request, clusters []*ClusterInfo, statuses []*Status)
}

// ScorePlugin ranks a feasible cluster. Scores of all score plugins are
// added up; higher is better. A non-success status drops the score plugin's
// contribution for that cluster (it never filters). Score must be safe for
// concurrent use.
type ScorePlugin interface {
	Plugin
	Score(req *Request, c *ClusterInfo) (int64, *Status)
}

// PreparePlugin is optional for filter and score plugins: Prepare runs once
// per request before any Filter or Score call, to parse or index what would
// otherwise be recomputed per cluster; it caches the result with
// req.SetState(Name(), v). Skipped() tells the core the plugin has nothing
// to do for this request, so it is not called per cluster. Any other
// non-success status makes every cluster unschedulable for that plugin
// with the status' reasons.
type PreparePlugin interface {
	Plugin
	Prepare(req *Request) *Status
}

// NormalizeScorePlugin is optional for score plugins whose raw scores only
// mean something relative to each other (prices, free GPUs).
// NormalizeScore runs once per request after Score was called on every
// feasible cluster; clusters[i] got scores[i] (0 where Score failed), in
// name order. It rewrites scores in place, by convention to 0..100. A
// non-success status drops the plugin's contribution for every cluster.
type NormalizeScorePlugin interface {
	ScorePlugin
	NormalizeScore(req *Request, clusters []*ClusterInfo, scores []int64) *Status
}

// Profile is the ordered list of plugins a scheduler runs.
// The default profile lives in package plugins (DefaultProfile), the one
// place that names the in-tree plugins.
type Profile struct {
	Filters []FilterPlugin
	Scores  []ScorePlugin
}
