package sealing

import "testing"

// FuzzOpen opens arbitrary bytes as a sealed secret read from the bus: it
// never panics, refuses what was not sealed to the key, and opens what was.
func FuzzOpen(f *testing.F) {
	k, err := Generate()
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(nil), false)
	f.Add([]byte("apiVersion: v1\nkind: Config\n"), true)
	f.Add(make([]byte, 48), false)
	f.Add(make([]byte, 200), false)
	f.Fuzz(func(t *testing.T, data []byte, seal bool) {
		if !seal {
			if _, err := k.Open(data); err == nil && len(data) < 48 {
				t.Fatalf("opened %d bytes, shorter than any sealed box", len(data))
			}
			return
		}
		sealed, err := Seal(k.Public, data)
		if err != nil {
			t.Fatal(err)
		}
		got, err := k.Open(sealed)
		if err != nil || string(got) != string(data) {
			t.Fatalf("Open(Seal(%q)) = %q, %v", data, got, err)
		}
	})
}
