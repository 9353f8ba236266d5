package readmodel

import (
	"errors"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/events"
)

// t0 is when the recorded events of these tests happened.
var t0 = time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC)

var (
	myApp    = events.ObjectKey{Group: "apps", Kind: "Deployment", Namespace: "default", Name: "my-app"}
	mySvc    = events.ObjectKey{Kind: "Service", Namespace: "default", Name: "my-app"}
	myPolicy = events.ObjectKey{Group: "policy.karmada.io", Kind: "PropagationPolicy", Namespace: "default", Name: "my-app-policy"}
)

// errInvalid stands for a stored message that is not a CloudEvent.
var errInvalid = errors.New("not a CloudEvent")

// recorder numbers the events it records as a stream would.
type recorder struct {
	t   *testing.T
	seq uint64
}

// stored records one event of type typ with data, stored at t0 plus its
// sequence in seconds.
func (r *recorder) stored(typ events.Type, data any) Stored {
	r.t.Helper()
	e, err := events.New(typ, "/test", "x", data)
	if err != nil {
		r.t.Fatal(err)
	}
	r.seq++
	return Stored{Event: e, Sequence: r.seq, Time: t0.Add(time.Duration(r.seq) * time.Second)}
}
