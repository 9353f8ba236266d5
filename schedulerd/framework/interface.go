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
// req.SetState(Name(), v). A non-success status makes every cluster
// unschedulable for that plugin with the status' reasons.
type PreparePlugin interface {
	Plugin
	Prepare(req *Request) *Status
}

// Profile is the ordered list of plugins a scheduler runs.
// The default profile lives in package plugins (DefaultProfile), the one
// place that names the in-tree plugins.
type Profile struct {
	Filters []FilterPlugin
	Scores  []ScorePlugin
}
