package main

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/flotilla-io/flotilla/readmodel"
)

// quotaColumns are `get federatedresourcequotas`'s columns.
var quotaColumns = []string{"NAME", "OVERALL", "OVERALL_USED", "AGE"}

func quotaCells(f readmodel.Fleet, q readmodel.Quota) []any {
	r := q.Record()
	return []any{q.Name, resourceString(q.Overall), orNone(resourceString(q.OverallUsed)), age(f.Published.Created(r.Key, r.UpdatedAt))}
}

// quotaObject is the quota as applied, with Karmada's status: overall and
// overallUsed.
func quotaObject(f readmodel.Fleet, q readmodel.Quota) map[string]any {
	obj := f.RecordObject(q.Record())
	obj["status"] = map[string]any{"overall": q.Overall, "overallUsed": q.OverallUsed}
	return obj
}

// resourceString writes a resource list as "cpu: 2, memory: 4Gi", names sorted.
func resourceString(l corev1.ResourceList) string {
	names := make([]string, 0, len(l))
	for n := range l {
		names = append(names, string(n))
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		q := l[corev1.ResourceName(n)]
		parts[i] = n + ": " + q.String()
	}
	return strings.Join(parts, ", ")
}
