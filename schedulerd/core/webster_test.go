package core

import (
	"hash/fnv"
	"reflect"
	"strings"
	"testing"
)

const (
	oddUID  = "d43fdeeb-d750-4e2b-bee3-64eb94534f4c"
	evenUID = "4858ca61-3ff8-4095-8267-f3d059d8074c"
)

func TestTieDirectionFollowsUIDHashParity(t *testing.T) {
	if !tieDescending(oddUID) {
		t.Errorf("odd-hash UID %s should break ties by descending name", oddUID)
	}
	if tieDescending(evenUID) || tieDescending("") {
		t.Errorf("even-hash and empty UIDs should break ties by ascending name")
	}
}

func TestWebster(t *testing.T) {
	type seats = map[string]int64
	tests := []struct {
		name    string
		weights seats
		initial seats
		n       int64
		uid     string
		want    seats
	}{
		{"170:110:60 with 5 seats gives 2:2:1", seats{"A": 170, "B": 110, "C": 60}, nil, 5, "", seats{"A": 2, "B": 2, "C": 1}},
		{"170:110:60 with 6 seats gives 3:2:1", seats{"A": 170, "B": 110, "C": 60}, nil, 6, "", seats{"A": 3, "B": 2, "C": 1}},
		{"2:1 with 1 seat gives 1:0", seats{"A": 2, "B": 1}, nil, 1, "", seats{"A": 1, "B": 0}},
		{"2:1 with 2 seats gives 1:1", seats{"A": 2, "B": 1}, nil, 2, "", seats{"A": 1, "B": 1}},
		{"2:1 with 3 seats gives 2:1", seats{"A": 2, "B": 1}, nil, 3, "", seats{"A": 2, "B": 1}},
		{"1:1 with 5 seats and an odd-hash UID gives 2:3", seats{"A": 1, "B": 1}, nil, 5, oddUID, seats{"A": 2, "B": 3}},
		{"1:1 with 5 seats and an even-hash UID gives 3:2", seats{"A": 1, "B": 1}, nil, 5, evenUID, seats{"A": 3, "B": 2}},
		{"3:2:1 with 13 seats gives 7:4:2 (fewer seats wins the tie at seat 9)", seats{"m1": 3, "m2": 2, "m3": 1}, nil, 13, "", seats{"m1": 7, "m2": 4, "m3": 2}},
		{"2:1:1:1 with 9 seats gives 3:2:2:2", seats{"m1": 2, "m2": 1, "m3": 1, "m4": 1}, nil, 9, "", seats{"m1": 3, "m2": 2, "m3": 2, "m4": 2}},
		{"2:1:1:1 with 7 seats gives 3:2:1:1", seats{"m1": 2, "m2": 1, "m3": 1, "m4": 1}, nil, 7, "", seats{"m1": 3, "m2": 2, "m3": 1, "m4": 1}},
		{"2:1:1:1 with 8 seats gives 3:2:2:1", seats{"m1": 2, "m2": 1, "m3": 1, "m4": 1}, nil, 8, "", seats{"m1": 3, "m2": 2, "m3": 2, "m4": 1}},
		{"8:8:10 with 12 seats gives 4:4:4", seats{"m1": 8, "m2": 8, "m3": 10}, nil, 12, "", seats{"m1": 4, "m2": 4, "m3": 4}},
		{"1:1:1 with 10 seats and no UID gives 4:3:3", seats{"m1": 1, "m2": 1, "m3": 1}, nil, 10, "", seats{"m1": 4, "m2": 3, "m3": 3}},
		{"5:5:5 with 10 seats and no UID gives 4:3:3", seats{"m1": 5, "m2": 5, "m3": 5}, nil, 10, "", seats{"m1": 4, "m2": 3, "m3": 3}},
		{"existing 1/2/3 at 1:2:3 plus 2 seats gives 1/3/4", seats{"A": 1, "B": 2, "C": 3}, seats{"A": 1, "B": 2, "C": 3}, 2, "", seats{"A": 1, "B": 3, "C": 4}},
		{"existing 1/2/3 at 1:2:3 plus 3 seats gives 2/3/4", seats{"A": 1, "B": 2, "C": 3}, seats{"A": 1, "B": 2, "C": 3}, 3, "", seats{"A": 2, "B": 3, "C": 4}},
		{"names compare byte-wise so member10 wins a tie against member2", seats{"member2": 1, "member10": 1}, nil, 1, "", seats{"member10": 1, "member2": 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var parties []party
			for name, w := range tt.weights {
				parties = append(parties, party{name: name, weight: w, seats: tt.initial[name]})
			}
			webster(tt.n, parties, tieDescending(tt.uid))
			got := seats{}
			for _, p := range parties {
				got[p.name] = p.seats
			}
			if !reflect.DeepEqual(tt.want, got) {
				t.Errorf("want %v, got %v", tt.want, got)
			}
		})
	}
}

// tieDescending hashes as hash/fnv's FNV-1a-32.
func TestTieDescendingIsFNV1a(t *testing.T) {
	for _, uid := range []string{"a", "b", "d43fdeeb-d750-4e2b-bee3-64eb94534f4c", "uid-1", "uid-2", "ü", strings.Repeat("x", 100)} {
		h := fnv.New32a()
		h.Write([]byte(uid))
		if want := h.Sum32()&1 == 1; tieDescending(uid) != want {
			t.Errorf("%q: tieDescending %v, FNV-1a says %v", uid, !want, want)
		}
	}
}
