package validation

import (
	"encoding/json"
	"testing"
)

// BenchmarkValidateObject: policyd validates every applied object; this is
// flotilla bench's Deployment as policyd decodes it.
func BenchmarkValidateObject(b *testing.B) {
	const doc = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app":"app-00001"},"name":"app-00001","namespace":"bench"},"spec":{"replicas":12,"selector":{"matchLabels":{"app":"app-00001"}},"template":{"metadata":{"labels":{"app":"app-00001"}},"spec":{"containers":[{"image":"nginx:1.25.3","name":"app","resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}]}}}}`
	b.ReportAllocs()
	for b.Loop() {
		var obj map[string]any
		_ = json.Unmarshal([]byte(doc), &obj)
		if _, errs, _ := ValidateObject(obj); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
