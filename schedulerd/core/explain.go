package core

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// fitError is the "no cluster fits" message: the per-reason summary of the
// diagnosis, most common reason first, e.g.
// "0/3 clusters are available: ClusterAffinity: cluster(s) did not match
// the placement cluster affinity constraint (2: a, b); TaintToleration:
// cluster(s) had untolerated taint {k=v:NoSchedule} (1: c)."
func fitError(total int, diagnosis map[string][]string) string {
	if total == 0 {
		return "0/0 clusters are available: no member clusters are known."
	}
	byReason := map[string][]string{}
	for cluster, reasons := range diagnosis {
		for _, r := range reasons {
			byReason[r] = append(byReason[r], cluster)
		}
	}
	reasons := make([]string, 0, len(byReason))
	for r := range byReason {
		reasons = append(reasons, r)
		slices.Sort(byReason[r])
	}
	slices.SortFunc(reasons, func(a, b string) int {
		if d := len(byReason[b]) - len(byReason[a]); d != 0 {
			return d
		}
		return cmp.Compare(a, b)
	})
	var sb strings.Builder
	sb.WriteString("0/")
	sb.WriteString(strconv.Itoa(total))
	sb.WriteString(" clusters are available: ")
	for i, r := range reasons {
		if i > 0 {
			sb.WriteString("; ")
		}
		cs := byReason[r]
		sb.WriteString(r)
		sb.WriteString(" (")
		sb.WriteString(strconv.Itoa(len(cs)))
		sb.WriteString(": ")
		const shown = 5
		sb.WriteString(strings.Join(cs[:min(len(cs), shown)], ", "))
		if len(cs) > shown {
			sb.WriteString(", ... ")
			sb.WriteString(strconv.Itoa(len(cs) - shown))
			sb.WriteString(" more")
		}
		sb.WriteString(")")
	}
	sb.WriteString(".")
	return sb.String()
}
