package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/natsbus"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/policyd/validation"
	"github.com/flotilla-io/flotilla/readmodel"
)

// What an apply does to each object, in kubectl's words.
const (
	verbCreated    = "created"
	verbConfigured = "configured"
	verbUnchanged  = "unchanged"
)

// classify says what applying d does against the accepted objects p:
// created (no such object), configured (it differs) or unchanged (the
// same object is accepted: nothing is published). Sealed credentials are
// never compared (their sealing differs every time).
func classify(p readmodel.Published, d validation.Document, sealed bool) string {
	k := events.KeyOf(d.APIVersion, d.Kind, d.Namespace, d.Name)
	_, ok := p.Records[k]
	switch {
	case !ok:
		return verbCreated
	case sealed:
		return verbConfigured
	case p.Unchanged(k, d.Object):
		return verbUnchanged
	}
	return verbConfigured
}

// definedKinds records in kinds ("group/Kind") the kind an interpreter
// customization targets or a CustomResourceDefinition defines: applying
// one says that kind is meant, not a typo.
func definedKinds(apiVersion, kind string, obj map[string]any, kinds map[string]bool) {
	spec, _ := obj["spec"].(map[string]any)
	switch {
	case apiVersion == policy.ConfigAPIVersion && kind == policy.KindResourceInterpreterCustomization:
		target, _ := spec["target"].(map[string]any)
		av, _ := target["apiVersion"].(string)
		k, _ := target["kind"].(string)
		kinds[events.KeyOf(av, k, "", "").Group+"/"+k] = true
	default:
		defined := validation.CustomScopes{}
		defined.Add(apiVersion, kind, obj)
		for k := range defined {
			kinds[k] = true
		}
	}
}

// joinedCredentials is the secret a joined cluster's credentials are in
// when d is a Cluster document without spec.secretRef for a cluster
// accepted with one (nil otherwise): the stand-in Cluster files the
// examples ship, or a file with only the fields to change. apply and
// delete -f both keep such a cluster as it is (dropsCredentials,
// keepJoinedClusters).
func joinedCredentials(accepted readmodel.Published, d validation.Document) *policy.LocalSecretRef {
	if d.APIVersion != policy.ClusterAPIVersion || d.Kind != policy.KindCluster {
		return nil
	}
	if spec, _ := d.Object["spec"].(map[string]any); spec["secretRef"] != nil {
		return nil
	}
	r, ok := accepted.Records[events.KeyOf(d.APIVersion, d.Kind, "", d.Name)]
	if !ok {
		return nil
	}
	var was policy.Cluster
	if json.Unmarshal(r.Object, &was) != nil {
		return nil
	}
	return was.Spec.SecretRef
}

// secretName is ref's namespace/name, in the namespace join uses when it
// names none.
func secretName(ref *policy.LocalSecretRef) string {
	return cmp.Or(ref.Namespace, policy.CredentialsNamespace) + "/" + ref.Name
}

// dropsCredentials says why applying d would take away the credentials
// of a joined cluster ("": it does not): apply replaces the whole object
// (it does not merge as kubectl apply does), so a file with only the
// fields to change (a label) made healthd and executord lose the member's
// kubeconfig: NotReady, and its workloads evicted 5 minutes later.
func dropsCredentials(accepted readmodel.Published, d validation.Document) string {
	ref := joinedCredentials(accepted, d)
	if ref == nil {
		return ""
	}
	return fmt.Sprintf("required: cluster %s is joined with the credentials in secret %s, and apply replaces the whole Cluster: "+
		"without secretRef healthd and executord lose them and the member goes NotReady; keep spec.secretRef in the file "+
		"(flotilla get cluster %s -o yaml shows it), or join it again to change its credentials",
		d.Name, secretName(ref), d.Name)
}

// reportUnchanged prints the objects apply leaves as they are.
func reportUnchanged(out io.Writer, d validation.Document) {
	fmt.Fprintf(out, "%s %s\n", label(d.Kind, d.APIVersion, d.Name), verbUnchanged)
}

// preflight checks docs against what is accepted before anything is
// published: a template of a kind Flotilla does not know (a custom
// resource, or a typo such as app/v1) is refused unless allowUnknown, a
// template of that kind is accepted already, or a
// ResourceInterpreterCustomization or CustomResourceDefinition, accepted or
// applied with it, names the kind (definedKinds); then it warns of what
// would surprise (readmodel.ApplyWarnings).
func preflight(ctx context.Context, errw io.Writer, bus *natsbus.Bus, accepted readmodel.Published, docs []validation.Document, allowUnknown bool) error {
	kinds := map[string]bool{}
	for k, r := range accepted.Records {
		kinds[k.Group+"/"+k.Kind] = true
		var obj map[string]any
		if json.Unmarshal(r.Object, &obj) == nil {
			definedKinds(r.APIVersion, k.Kind, obj, kinds)
		}
	}
	for _, d := range docs {
		definedKinds(d.APIVersion, d.Kind, d.Object, kinds)
	}
	refused := 0
	for _, d := range docs {
		if why := validation.Unappliable(d.APIVersion, d.Kind); why != "" {
			refused++
			fmt.Fprintf(errw, "error: %s: line %d: %s: %s\n", d.Where(), d.Line, d.Field("kind"), why)
			continue
		}
		unknown, suggest := validation.UnknownKind(d.APIVersion, d.Kind)
		if !unknown || allowUnknown || kinds[events.KeyOf(d.APIVersion, d.Kind, "", "").Group+"/"+d.Kind] {
			continue
		}
		refused++
		hint := ""
		if len(suggest) > 0 {
			hint = fmt.Sprintf(" (did you mean %s?)", strings.Join(suggest, " or "))
		}
		fmt.Fprintf(errw, "error: %s: line %d: %s: %s %s is no kind Flotilla knows%s: a typo would start a new kind of template; "+
			"pass --allow-unknown-kinds to apply a custom resource\n", d.Where(), d.Line, d.Field("apiVersion"), d.APIVersion, d.Kind, hint)
	}
	for _, d := range docs {
		if why := dropsCredentials(accepted, d); why != "" {
			refused++
			fmt.Fprintf(errw, "error: %s: line %d: %s: %s\n", d.Where(), d.Line, d.Field("spec.secretRef"), why)
		}
	}
	if refused > 0 {
		fmt.Fprintf(errw, "nothing was applied: %d error(s)\n", refused)
		return exitError{errors.New("refused before publishing")}
	}
	clusters, err := readClusters(ctx, bus)
	if err != nil {
		return err
	}
	for _, w := range readmodel.ApplyWarnings(accepted, readmodel.MemberNames(clusters), docs) {
		fmt.Fprintln(errw, "Warning:", w)
	}
	return nil
}
