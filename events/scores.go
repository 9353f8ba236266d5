package events

import (
	"slices"
	"strconv"
)

// ClusterScores are a placement's feasible clusters with their scores
// (data.scores). They encode as the JSON object {"cluster": score, ...}
// of the clusters whose score is not 0, with the names sorted (the bytes a
// map[string]int64 of those gives), from two slices in name order:
// building a 100-entry map per placement and sorting its keys again to
// encode it was 4 % of the placement path. A feasible cluster missing
// from the object scored 0: with no score plugin preferring one cluster
// (static weights, Duplicated without preferences) the object is empty
// instead of a third of the placement. Read-only once made.
type ClusterScores struct {
	names  []string
	values []int64
}

// NewClusterScores pairs names[i] with values[i] (a name without a value
// scores 0). It keeps both slices (the caller must not change them
// afterwards); names are sorted here when they are not already (a
// placement's feasible list is).
func NewClusterScores(names []string, values []int64) *ClusterScores {
	if len(values) < len(names) {
		values = append(slices.Clone(values), make([]int64, len(names)-len(values))...)
	}
	s := &ClusterScores{names: names, values: values[:len(names)]}
	if !slices.IsSorted(names) {
		s.names, s.values = slices.Clone(names), slices.Clone(s.values)
		idx := make([]int, len(names))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(a, b int) int {
			switch {
			case names[a] < names[b]:
				return -1
			case names[a] > names[b]:
				return 1
			}
			return 0
		})
		for i, j := range idx {
			s.names[i], s.values[i] = names[j], values[j]
		}
	}
	return s
}

// ScoresOf makes ClusterScores from a map (tests, tools).
func ScoresOf(m map[string]int64) *ClusterScores {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	values := make([]int64, len(names))
	for i, n := range names {
		values[i] = m[n]
	}
	return &ClusterScores{names: names, values: values}
}

// Len is the number of clusters scored (0 for nil).
func (s *ClusterScores) Len() int {
	if s == nil {
		return 0
	}
	return len(s.names)
}

// Score returns the score of cluster and whether it was scored (read
// back from JSON, a cluster scored 0 was not written).
func (s *ClusterScores) Score(cluster string) (int64, bool) {
	if s == nil {
		return 0, false
	}
	if i, ok := slices.BinarySearch(s.names, cluster); ok {
		return s.values[i], true
	}
	return 0, false
}

// Map returns the scores as a new map.
func (s *ClusterScores) Map() map[string]int64 {
	m := make(map[string]int64, s.Len())
	for i := range s.Len() {
		m[s.names[i]] = s.values[i]
	}
	return m
}

// MarshalJSON writes {"name": score, ...} in name order, leaving out the
// scores of 0. A name that is not a plain DNS name (every registered
// cluster's is) goes through the codec's string encoding, so the bytes
// stay encoding/json's.
func (s ClusterScores) MarshalJSON() ([]byte, error) {
	n := 2
	for i, name := range s.names {
		if s.values[i] != 0 {
			n += len(name) + 24
		}
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	for i, name := range s.names {
		if s.values[i] == 0 {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		if plainName(name) {
			out = append(out, '"')
			out = append(out, name...)
			out = append(out, '"')
		} else {
			q, err := MarshalJSON(name)
			if err != nil {
				return nil, err
			}
			out = append(out, q...)
		}
		out = append(out, ':')
		out = strconv.AppendInt(out, s.values[i], 10)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads the object MarshalJSON writes.
func (s *ClusterScores) UnmarshalJSON(data []byte) error {
	var m map[string]int64
	if err := UnmarshalJSON(data, &m); err != nil {
		return err
	}
	*s = *ScoresOf(m)
	return nil
}

// plainName: only letters, digits, '-', '.' and '_', which JSON writes as
// they are.
func plainName(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}
