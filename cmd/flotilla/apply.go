package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/events/sealing"
	"github.com/flotilla-io/flotilla/internal/member"
	"github.com/flotilla-io/flotilla/policyd"
	"github.com/flotilla-io/flotilla/policyd/validation"
	"github.com/flotilla-io/flotilla/readmodel"
)

const cliSource = "/flotilla-cli"

func newApply(g *globals) *cobra.Command {
	var m manifestFlags
	var timeout time.Duration
	var allowUnknown bool
	c := &cobra.Command{
		Use:   "apply -f FILE|DIR|- [-f ...] [-R] [-n NS]",
		Short: "Apply resource templates, policies and Cluster objects",
		Long: `Apply Kubernetes objects (Deployments, Services, ... as templates),
PropagationPolicy / ClusterPropagationPolicy / OverridePolicy /
ClusterOverridePolicy and cluster.karmada.io Cluster objects.

Every document is validated strictly here, with policyd's own validator,
before anything is published: an unknown field, a wrong type or a bad
selector is an error naming the file, the document, the line and the field
path, and nothing is published. Secrets in karmada-system (cluster
credentials, e.g. the one a Cluster's spec.secretRef names) are sealed to the
credentials key before they leave this process and are never propagated.
As kubectl's, -n is the namespace of the namespaced objects whose document
names none (an object naming another namespace is then an error), and -R
reads the directories given with -f with their subdirectories.

apply publishes the objects in order, with sealed credentials first and then
the propagation and override policies, so that a template applied with
several policies that match it is claimed as Karmada's rules say (the
highest priority, the most specific selector), not by whichever came
first in the file; one NATS does not acknowledge (as
while flotilla up restarts after a crash) is published again until it is
stored or --timeout has passed. apply then waits up to --timeout for
policyd's verdict on every object. It does not give up early: a policyd
that is starting, or catching up after a crash, answers within the timeout
once it has caught up.

Exit status:
  0  every object was accepted
  1  an object was refused (by the validator here or by policyd), or an
     error stopped apply (then what was not published is not applied)
  3  every object is stored on the bus but not all were confirmed within
     --timeout (none refused): policyd handles them once it runs, and
     ` + "`flotilla get`" + ` shows them then`,
		Example: "  S=examples/seed000\n  flotilla apply -f $S/my-app.yaml -f $S/propagation-policy.yaml -f $S/override-policy.yaml\n  cat policy.yaml | flotilla apply -f -",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := m.load(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			return g.withBus(ctx, func(bus *natsbus.Bus) error {
				return applyDocs(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), bus, res.Docs, &m, timeout, allowUnknown)
			})
		},
	}
	m.addTo(c, "namespace of the namespaced objects whose document names none (an object naming another is an error)")
	c.Flags().DurationVar(&timeout, "timeout", defaultConfirmTimeout, "how long to wait for policyd to confirm (exit status 3 after it)")
	c.Flags().BoolVar(&allowUnknown, "allow-unknown-kinds", false, "apply templates of kinds Flotilla does not know (custom resources whose CRD is neither accepted nor in this apply)")
	_ = c.MarkFlagRequired("filename")
	return c
}

// outgoing is one event the CLI is about to publish.
type outgoing struct {
	subject string
	event   events.Event
	key     events.ObjectKey
	label   string
	// verb is what applying it does (created, configured); "" for a deletion.
	verb string
}

func applyDocs(ctx context.Context, out, errw io.Writer, bus *natsbus.Bus, docs []validation.Document, m *manifestFlags, timeout time.Duration, allowUnknown bool) error {
	credentials := policy.CredentialSecretsIn(validation.Objects(docs))
	accepted, err := readPublished(ctx, bus)
	if err != nil {
		return err
	}
	m.customNamespaces(accepted, docs)
	if err := preflight(ctx, errw, bus, accepted, docs, allowUnknown); err != nil {
		return err
	}
	var msgs []outgoing
	var key *sealing.Key
	type seen struct {
		doc  validation.Document
		verb string
	}
	first := map[events.ObjectKey]seen{} // the first document of each object in this apply
	for _, d := range docs {
		k := events.KeyOf(d.APIVersion, d.Kind, d.Namespace, d.Name)
		readmodel.StripServerFields(d.Object)
		sealed := credentials[d.Namespace+"/"+d.Name] && d.Kind == "Secret" && d.APIVersion == "v1"
		verb := classify(accepted, d, sealed)
		if f, again := first[k]; again {
			// kubectl applies both too; the second is then a change of
			// what the first applied, and probably not meant.
			fmt.Fprintf(errw, "Warning: %s: %s is also %s: both are applied, this one last\n",
				d.Where(), label(d.Kind, d.APIVersion, d.Name), f.doc.Where())
			if verb != verbUnchanged || f.verb != verbUnchanged {
				verb = verbConfigured
			}
		} else {
			first[k] = seen{d, verb}
		}
		if verb == verbUnchanged {
			reportUnchanged(out, d)
			continue
		}
		if sealed {
			if key == nil {
				var err error
				if key, err = fetchSealKey(ctx, bus); err != nil {
					return err
				}
			}
			s, err := sealSecret(d, key)
			if err != nil {
				return err
			}
			e, err := events.New(events.TypeSecretSealed, cliSource, k.String(), s)
			if err != nil {
				return err
			}
			msgs = append(msgs, outgoing{events.InputSubject(k), e, k, label(d.Kind, d.APIVersion, d.Name), verb})
			continue
		}
		e, err := events.New(events.TypeObjectApplied, cliSource, k.String(), d.Object)
		if err != nil {
			return err
		}
		msgs = append(msgs, outgoing{events.InputSubject(k), e, k, label(d.Kind, d.APIVersion, d.Name), verb})
	}
	if len(msgs) == 0 {
		return nil
	}
	return publishAndConfirm(ctx, out, errw, bus, publishOrder(msgs), timeout)
}

// publishOrder is msgs in the order apply publishes them: sealed secrets
// first, so a Cluster finds its credentials; then policies, so a template
// that comes with several policies matching it is claimed by the one
// Karmada's rules pick (readmodel.ApplyWarnings says which). Published
// after the template, the first policy claimed it and kept it, as a
// claimed template keeps its policy. The rest keep their file order.
func publishOrder(msgs []outgoing) []outgoing {
	rank := func(m outgoing) int {
		switch {
		case m.event.Type() == string(events.TypeSecretSealed):
			return 0
		case m.key.Group == "policy.karmada.io":
			return 1
		}
		return 2
	}
	ordered := slices.Clone(msgs)
	slices.SortStableFunc(ordered, func(a, b outgoing) int { return rank(a) - rank(b) })
	return ordered
}

// publishAndConfirm publishes the events and waits for policyd's verdict on
// each: object.accepted, object.rejected or object.removed, or, for a
// template a policy claims, the binding.changed that carries its accepted
// generation (policyd publishes only that; DESIGN.md decision 15). It
// returns nil when every object is confirmed, an exitError (status 1) when
// one is refused, notConfirmed (status 3) when all are stored but not all
// confirmed within timeout, and any other error when publishing failed. It
// waits the whole timeout: there is no telling a policyd that is starting
// or catching up from one that is not running, so it never gives up early.
func publishAndConfirm(ctx context.Context, out, errw io.Writer, bus *natsbus.Bus, msgs []outgoing, timeout time.Duration) error {
	verdicts := make(chan natsbus.Message, len(msgs)*2+16)
	wanted := make(map[string]events.ObjectKey, len(msgs)) // event id -> key; read-only from here on
	for _, m := range msgs {
		wanted[m.event.ID()] = m.key
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Subscribed before publishing: policyd may answer at once.
	sub, err := bus.Subscribe(wctx, events.StreamPolicy, []string{events.AllObjects, events.AllRejected, events.AllBindings}, true)
	if err != nil {
		return err
	}
	watching := make(chan error, 1)
	go func() {
		watching <- sub.Run(func(m natsbus.Message) {
			if m.Err != nil {
				return
			}
			key, ok := wanted[events.CausationID(m.Event)]
			if !ok {
				return // a policy's applied event also causes other templates' bindings
			}
			if events.Type(m.Event.Type()) == events.TypeBindingChanged && m.Event.Subject() != key.String() {
				return
			}
			select {
			case verdicts <- m:
			default:
			}
		})
	}()
	pending := map[string]outgoing{}
	for i, m := range msgs {
		if err := publishStored(ctx, errw, bus, m, timeout); err != nil {
			return fmt.Errorf("%s and the %d object(s) after it were not applied: %w", m.label, len(msgs)-i-1, err)
		}
		pending[m.event.ID()] = m
	}
	failed := 0
	// unconfirmed reports what is still pending, stored on the bus.
	start := time.Now()
	unconfirmed := func(why string) error {
		waited := min(time.Since(start).Round(time.Second), timeout)
		for _, o := range msgs {
			if _, ok := pending[o.event.ID()]; ok {
				fmt.Fprintf(errw, "%s stored on the bus, not confirmed within %s: is policyd running? `flotilla get` will show it once handled\n", o.label, waited)
			}
		}
		if failed > 0 { // a refusal is what the user must act on first
			return exitError{fmt.Errorf("%d object(s) rejected, %d not confirmed", failed, len(pending))}
		}
		return notConfirmed{len(pending), waited, why}
	}
	deadline := time.After(timeout)
	waiting := time.After(min(waitingNote, timeout/2))
	for len(pending) > 0 {
		select {
		case m := <-verdicts:
			if m.Err != nil {
				continue
			}
			o, ok := pending[events.CausationID(m.Event)]
			if !ok {
				continue
			}
			delete(pending, o.event.ID())
			switch events.Type(m.Event.Type()) {
			case events.TypeObjectRejected:
				failed++
				var r events.Rejection
				_ = events.Decode(m.Event, &r)
				for _, p := range r.Problems {
					fmt.Fprintf(errw, "error: %s: %s\n", o.label, validation.Format(p))
				}
			case events.TypeObjectRemoved:
				fmt.Fprintf(out, "%s deleted\n", o.label)
			case events.TypeBindingChanged:
				var b events.Binding
				_ = events.Decode(m.Event, &b)
				fmt.Fprintf(out, "%s %s (generation %d)\n", o.label, o.verb, b.Generation)
			default:
				var rec events.ObjectRecord
				_ = events.Decode(m.Event, &rec)
				fmt.Fprintf(out, "%s %s (generation %d)\n", o.label, o.verb, rec.Generation)
			}
		case err := <-watching:
			if err != nil {
				// Everything is stored; only the answers can no longer be seen.
				return unconfirmed("watching for policyd's answers failed: " + err.Error())
			}
			watching = nil
		case <-waiting:
			fmt.Fprintf(errw, "waiting for policyd to confirm %d of %d object(s) (up to %s)...\n", len(pending), len(msgs), timeout)
		case <-deadline:
			return unconfirmed(policydBacklog(ctx, bus))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if failed > 0 {
		return exitError{fmt.Errorf("%d object(s) rejected", failed)}
	}
	return nil
}

// publishStored publishes m and waits until JetStream has stored it. While
// NATS does not answer (a publish whose acknowledgement was lost when the
// server died, no JetStream while a restarted server restores its streams)
// it publishes the same event again, for up to timeout: JetStream keeps one
// copy of an event id, so an event stored before its acknowledgement was
// lost is not stored twice. Without this, a crash of `flotilla up` in the
// middle of a long apply left every object after the one in flight
// unpublished (DESIGN.md §4). A refusal by JetStream (natsbus.Refused) is
// returned at once.
func publishStored(ctx context.Context, errw io.Writer, bus *natsbus.Bus, m outgoing, timeout time.Duration) error {
	giveUp := time.Now().Add(timeout)
	for wait := 200 * time.Millisecond; ; wait = min(2*wait, 2*time.Second) {
		actx, cancel := context.WithTimeout(ctx, publishAttempt)
		err := bus.Publish(actx, m.subject, m.event)
		cancel()
		if err == nil || natsbus.Refused(err) || ctx.Err() != nil || time.Now().Add(wait).After(giveUp) {
			return err
		}
		if wait == 200*time.Millisecond { // the first failure
			fmt.Fprintf(errw, "%s: NATS did not acknowledge it (%v); publishing it again for up to %s\n", m.label, err, timeout)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// publishAttempt bounds one publish: how long apply waits for JetStream's
// acknowledgement before it publishes the event again.
const publishAttempt = 5 * time.Second

// defaultConfirmTimeout is how long apply and delete wait for policyd by
// default: longer than a restart of `flotilla up` plus one AckWait
// (DESIGN.md §4), so a crash while applying still ends in exit status 0.
const defaultConfirmTimeout = 60 * time.Second

// waitingNote is when apply says that it is still waiting.
const waitingNote = 5 * time.Second

// notConfirmed: the objects are stored on the bus, but policyd has not
// confirmed them all within the timeout. The command exits with status 3.
type notConfirmed struct {
	pending int
	waited  time.Duration
	backlog string // what policyd's consumer holds, if known
}

func (e notConfirmed) Error() string {
	msg := fmt.Sprintf("%d object(s) stored on the bus, not confirmed within %s", e.pending, e.waited)
	if e.backlog != "" {
		msg += " (" + e.backlog + ")"
	}
	return msg
}

// ExitCode is the process's exit status for this error.
func (notConfirmed) ExitCode() int { return 3 }

// policydBacklog says what policyd's input consumer holds: "" when it is
// idle, else whether policyd never ran on this bus or what waits for it.
func policydBacklog(ctx context.Context, bus *natsbus.Bus) string {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	err := bus.ConsumerIdle(ctx, events.StreamInput, policyd.ConsumerName)
	switch {
	case errors.Is(err, natsbus.ErrConsumerMissing):
		return "policyd has never run against this NATS"
	case err != nil:
		return err.Error()
	}
	return ""
}

func label(kind, apiVersion, name string) string {
	group := ""
	if i := strings.LastIndex(apiVersion, "/"); i > 0 {
		group = "." + apiVersion[:i]
	}
	return strings.ToLower(kind) + group + "/" + name
}

// fetchSealKey reads the credentials public key announced by healthd/executord.
// It waits a little for daemons that are still starting.
func fetchSealKey(ctx context.Context, bus *natsbus.Bus) (*sealing.Key, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		key, err := bus.SealKey(ctx)
		if err != nil {
			return nil, err
		}
		if key != nil {
			return key, nil
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return nil, errors.New("no credentials key has been announced: start `flotilla up`, or healthd/executord, before registering clusters")
}

// sealSecret seals every value of a Secret document (member.SealValues);
// a kubeconfig's relative paths are resolved against the document's file.
func sealSecret(d validation.Document, key *sealing.Key) (events.SealedSecret, error) {
	values, err := member.SecretValues(d.Object)
	if err != nil {
		return events.SealedSecret{}, fmt.Errorf("%s: %w", d.Where(), err)
	}
	base := "."
	if d.File != "" && d.File != "-" {
		base = filepath.Dir(d.File)
	}
	sealed, err := member.SealValues(values, key, base)
	if err != nil {
		return events.SealedSecret{}, err
	}
	return events.SealedSecret{Namespace: d.Namespace, Name: d.Name, KeyID: key.ID, Data: sealed}, nil
}
