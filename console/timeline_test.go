package console

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTheTimelineListsEachStepOnce(t *testing.T) {
	r := failedOver(t)
	history, err := (&recordedSource{r: r}).History(context.Background(), web)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range timeline(history) {
		step := e.What
		if e.From != "" || e.To != "" {
			step += " " + e.From + " → " + e.To
		}
		got = append(got, step)
	}
	want := []string{"bound", "placed", "work", "work", "work",
		"moved cluster1=2, cluster2=2, cluster3=2 → cluster2=3, cluster3=3", "work", "work"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("web's timeline (-want +got):\n%s", diff)
	}
}
