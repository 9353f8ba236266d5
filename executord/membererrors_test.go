package executord

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/eventstest"
)

// The member errors of one apply, one class each (classify): a final one
// ends the apply, a forbidden one is retried with a long backoff, a
// transient one with the usual backoff.

func TestAMemberRefusalEndsTheApplyAsFailedAndIsNotRetriedUntilANewPlacement(t *testing.T) {
	_, bus := eventstest.Server(t)
	member := newFakeMember(t)
	member.setStatus(healthyStatus)
	const refusal = `Deployment.apps "web" is invalid: spec.template.spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive`
	member.refuse.Store(&metav1.Status{Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid, Message: refusal})
	clk := &testClock{t: t0}
	d := newTestDaemon(t, bus, member, clk, prometheus.NewRegistry(), zap.NewNop())
	w := newTestWorker(t, d)
	ctx := context.Background()

	handle(t, w, placement(1, 0, on("member1", 2)))
	st, _ := latestWork(t, bus)
	if st.Phase != events.WorkFailed || st.Reason != events.WorkReasonRefused || st.Message != refusal {
		t.Fatalf("work status: phase %q, reason %q, message %q; want Failed, %s and the member's message", st.Phase, st.Reason, st.Message, events.WorkReasonRefused)
	}
	if _, ok := w.heldNow(web); ok {
		t.Fatal("a refused apply was held for retries")
	}
	reports := workCount(t, bus)

	// A redelivered placement, the resync loop's drift check (the object
	// is missing from the member) and a restarted executord, whose work
	// records come from the bus, send nothing more.
	handle(t, w, placement(1, 0, on("member1", 2)))
	clk.add(time.Minute)
	w.retryHeld(ctx, clk.now())
	w.resync(ctx)
	restarted := newTestWorker(t, d)
	restarted.work[web] = st
	handle(t, restarted, placement(1, 0, on("member1", 2)))
	if got := member.asked(); got != 1 {
		t.Fatalf("the member was asked %d times to apply the manifest it refused, want once", got)
	}
	if got := workCount(t, bus); got != reports {
		t.Fatalf("%d work reports after the refusal, want %d (the report flipped)", got, reports)
	}

	// A new placement (here a reschedule's binding revision) tries again.
	member.refuse.Store(nil)
	handle(t, restarted, placement(2, time.Second, on("member1", 2)))
	if got := member.asked(); got != 2 {
		t.Fatalf("the member was asked %d times, want a second time for the new placement", got)
	}
	if st, _ := latestWork(t, bus); st.Phase != events.WorkRunning || st.Reason != "" {
		t.Fatalf("after the new placement: phase %q, reason %q; want Running and no reason", st.Phase, st.Reason)
	}
}

func TestAForbiddenApplySaysWhatTheCredentialsLackAndIsRetriedWithALongBackoff(t *testing.T) {
	_, bus := eventstest.Server(t)
	member := newFakeMember(t)
	member.setStatus(healthyStatus)
	member.refuse.Store(&metav1.Status{Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden,
		Message: `deployments.apps "web" is forbidden: User "system:serviceaccount:flotilla:restricted" cannot patch resource "deployments" in API group "apps" in the namespace "default"`})
	clk := &testClock{t: t0}
	w := newTestWorker(t, newTestDaemon(t, bus, member, clk, prometheus.NewRegistry(), zap.NewNop()))
	ctx := context.Background()

	handle(t, w, placement(1, 0, on("member1", 2)))
	st, _ := latestWork(t, bus)
	if want := "Forbidden: the credentials lack patch on deployments.apps in namespace default"; st.Phase != events.WorkForbidden || !strings.HasPrefix(st.Message, want) {
		t.Fatalf("work status: phase %q, message %q; want Forbidden, %q...", st.Phase, st.Message, want)
	}
	// The resync interval is 10ms: a transient error would wait at most
	// 100ms; a forbidden one keeps doubling.
	for range 9 {
		h, ok := w.heldNow(web)
		if !ok {
			t.Fatal("a forbidden apply was not held for retries")
		}
		clk.add(h.next.Sub(clk.now()))
		w.retryHeld(ctx, clk.now())
	}
	h, _ := w.heldNow(web)
	if got, want := h.next.Sub(clk.now()), 10*time.Millisecond<<9; h.failures != 10 || got != want {
		t.Fatalf("after %d failures the next retry waits %s, want 10 failures and %s", h.failures, got, want)
	}
	asked := member.asked()
	w.retryHeld(ctx, clk.now()) // not due yet
	if member.asked() != asked {
		t.Fatal("retried before its backoff ended")
	}

	// The member's admin grants the rights: the next retry applies.
	member.refuse.Store(nil)
	clk.add(h.next.Sub(clk.now()))
	w.retryHeld(ctx, clk.now())
	if _, ok := w.heldNow(web); ok {
		t.Fatal("still held once the member took the apply")
	}
	if st, _ := latestWork(t, bus); st.Phase != events.WorkRunning {
		t.Fatalf("phase %q once the rights were granted, want Running", st.Phase)
	}
}

func TestATransientFailureIsRetriedWithBackoffUntilTheMemberTakesTheApply(t *testing.T) {
	_, bus := eventstest.Server(t)
	member := newFakeMember(t)
	member.setStatus(healthyStatus)
	member.down.Store(true) // 503 Service Unavailable to everything
	clk := &testClock{t: t0}
	w := newTestWorker(t, newTestDaemon(t, bus, member, clk, prometheus.NewRegistry(), zap.NewNop()))
	ctx := context.Background()

	handle(t, w, placement(1, 0, on("member1", 2)))
	if st, _ := latestWork(t, bus); st.Phase != events.WorkFailed || st.Reason != "" || !strings.Contains(st.Message, "held, retried until member1 takes it") {
		t.Fatalf("work status: phase %q, reason %q, message %q; want Failed, held", st.Phase, st.Reason, st.Message)
	}
	clk.add(10 * time.Millisecond)
	w.retryHeld(ctx, clk.now())
	h, ok := w.heldNow(web)
	if !ok || h.failures != 2 || h.next.Sub(clk.now()) != 20*time.Millisecond {
		t.Fatalf("held %v, failures %d, next retry in %s; want held, 2 failures, one doubled interval", ok, h.failures, h.next.Sub(clk.now()))
	}

	member.down.Store(false) // 200 from now on
	clk.add(20 * time.Millisecond)
	w.retryHeld(ctx, clk.now())
	if _, ok := w.heldNow(web); ok {
		t.Fatal("still held once the member answered")
	}
	if applies, _ := member.counts(); applies != 1 {
		t.Fatalf("%d applies, want 1", applies)
	}
	if st, _ := latestWork(t, bus); st.Phase != events.WorkRunning {
		t.Fatalf("phase %q once the member answered, want Running", st.Phase)
	}
}
