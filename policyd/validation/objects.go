package validation

import "iter"

// Objects yields the Object of each document in order (for rules over a
// whole input, such as policy.CredentialSecretsIn).
func Objects(docs []Document) iter.Seq[map[string]any] {
	return func(yield func(map[string]any) bool) {
		for _, d := range docs {
			if !yield(d.Object) {
				return
			}
		}
	}
}
