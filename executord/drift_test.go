package executord

import "testing"

func TestDrift(t *testing.T) {
	desired := map[string]any{
		"metadata": map[string]any{"name": "my-app", "labels": map[string]any{"app": "my-app"}},
		"spec": map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "web", "image": "registry.beijing.example.com/nginx:1.25.3"}}}}},
	}
	live := func(mut func(m map[string]any)) map[string]any {
		m := map[string]any{
			"metadata": map[string]any{"name": "my-app", "labels": map[string]any{"app": "my-app", "extra": "x"}, "uid": "u"},
			"spec": map[string]any{"replicas": float64(3), "strategy": map[string]any{"type": "RollingUpdate"}, "template": map[string]any{"spec": map[string]any{
				"containers": []any{map[string]any{"name": "web", "image": "registry.beijing.example.com/nginx:1.25.3", "imagePullPolicy": "IfNotPresent"}}}}},
			"status": map[string]any{"readyReplicas": float64(3)},
		}
		if mut != nil {
			mut(m)
		}
		return m
	}
	cases := []struct {
		name string
		live map[string]any
		want string
	}{
		{"defaults, extra labels and status added by the server are not drift", live(nil), ""},
		{"replicas scaled by hand is drift", live(func(m map[string]any) { m["spec"].(map[string]any)["replicas"] = float64(5) }), "spec.replicas"},
		{"an image changed by hand is drift", live(func(m map[string]any) {
			m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "nginx:latest"
		}), "spec.template.spec.containers[0].image"},
		{"a label Flotilla set removed by hand is drift", live(func(m map[string]any) { delete(m["metadata"].(map[string]any)["labels"].(map[string]any), "app") }), "metadata.labels.app"},
		{"an extra container added by hand is drift", live(func(m map[string]any) {
			s := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			s["containers"] = append(s["containers"].([]any), map[string]any{"name": "sidecar"})
		}), "spec.template.spec.containers"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Drift(desired, c.live); got != c.want {
				t.Fatalf("Drift = %q, want %q", got, c.want)
			}
		})
	}
}
