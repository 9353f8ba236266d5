// Package validation is policyd's validator for user manifests: the one
// `flotilla apply -f` and `flotilla simulate -f` run before anything is
// published, and the one policyd runs on objects that reach it from the bus.
//
// It reads multi-document YAML or JSON and checks each document in two
// passes:
//
//  1. Structure: the YAML tree (internal/strictyaml, which healthd's
//     --taint-policy reader shares) is checked against the Go type of its
//     kind (Flotilla's Karmada-compatible types in events/policy, the
//     Kubernetes built-in types for built-in kinds). Duplicate keys,
//     unknown fields (matched case-sensitively, as the API server's strict
//     decoding does) and wrong scalar types are errors that name the field
//     path and the line.
//  2. Semantics: the document is decoded into its typed struct and checked
//     the way Karmada's CRD schema (errors) and admission webhook (warnings)
//     would, then the webhook's defaults are applied to Document.Object.
//     Every kind's name follows its API server's rule (names.go), built-in
//     workloads get the rules members enforce (workloads.go), and data and
//     object sizes are capped (size.go): what a member would refuse is
//     refused here, before it is published.
//
// Kinds of unknown API groups (CRDs) only need apiVersion, kind and
// metadata.name. Karmada's seed-document spellings that Flotilla accepts
// (docs/policy.md) are normalised in Document.Object and reported as
// warnings.
//
// Everything here is a pure function of its input; it is safe for
// concurrent use.
package validation
