package clock

import (
	"testing"
	"time"
)

func TestFunc(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name  string
		clock Clock
		want  func(got time.Time) bool
	}{
		{name: "a Func clock tells the time its function gives", clock: Func(func() time.Time { return t0 }),
			want: func(got time.Time) bool { return got.Equal(t0) }},
		{name: "a nil clock is the real one", clock: OrReal(nil),
			want: func(got time.Time) bool { return time.Since(got) < time.Minute }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.clock.Now(); !tt.want(got) {
				t.Errorf("Now() = %v", got)
			}
		})
	}
}

func TestTickerTicks(t *testing.T) {
	tk := Real.NewTicker(time.Millisecond)
	defer tk.Stop()
	select {
	case <-tk.C():
	case <-time.After(10 * time.Second):
		t.Fatal("the real ticker did not tick within 10s")
	}
}
