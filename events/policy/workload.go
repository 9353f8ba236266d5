package policy

import "strings"

// ReplicaField is the spec field that holds the replicas Karmada divides
// among clusters for a template of apiVersion and kind: "replicas" for
// apps Deployment, StatefulSet and ReplicaSet, "parallelism" for a batch
// Job, "" for every other kind (its replicas are not divided). A kind of
// the same name in another API group (a custom resource called
// Deployment, say) is not divided either.
//
// policyd reads the desired replicas from this field, executord's
// renderer writes each cluster's share into it, and `flotilla simulate`
// does both with the same answer.
func ReplicaField(apiVersion, kind string) string {
	group := ""
	if g, _, ok := strings.Cut(apiVersion, "/"); ok {
		group = g
	}
	switch {
	case group == "apps" && (kind == "Deployment" || kind == "StatefulSet" || kind == "ReplicaSet"):
		return "replicas"
	case group == "batch" && kind == "Job":
		return "parallelism"
	}
	return ""
}
