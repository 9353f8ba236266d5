package events

import (
	"encoding/json"
	"maps"
	"testing"
)

// ClusterScores encode as encoding/json encodes the same map without its
// zeros, whatever the names and their order, and read back to the same
// scores (a zero as absent).
func TestClusterScoresEncodeAsTheirMap(t *testing.T) {
	for _, m := range []map[string]int64{
		{},
		{"member-001": 0, "member-000": -3, "member-010": 100},
		{"b": 1, "a": 2, "é": 3, `q"uote`: 4, "<html>&": 5, "tab\t": -9223372036854775808},
	} {
		names, values := []string{}, []int64{}
		for n, v := range m { // map order: usually not sorted
			names, values = append(names, n), append(values, v)
		}
		s := NewClusterScores(names, values)
		got, err := MarshalJSON(s)
		if err != nil {
			t.Fatal(err)
		}
		nonZero := maps.Clone(m)
		maps.DeleteFunc(nonZero, func(_ string, v int64) bool { return v == 0 })
		want, _ := json.Marshal(nonZero)
		if string(got) != string(want) {
			t.Errorf("encoded %s, encoding/json gives %s", got, want)
		}
		var back *ClusterScores
		if err := UnmarshalJSON(got, &back); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(back.Map(), nonZero) {
			t.Errorf("read back %v, want %v", back.Map(), nonZero)
		}
		for n, v := range m {
			if got, _ := back.Score(n); got != v {
				t.Errorf("Score(%q) = %d, want %d", n, got, v)
			}
		}
		if _, ok := back.Score("absent"); ok {
			t.Error("Score of an absent cluster must say so")
		}
	}
	// A placement without scores has no "scores" key.
	data, _ := MarshalJSON(PlacementDecision{})
	var keys map[string]any
	_ = json.Unmarshal(data, &keys)
	if _, ok := keys["scores"]; ok {
		t.Errorf("nil scores encoded: %s", data)
	}
}
