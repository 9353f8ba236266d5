package events

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// publisher records which of its methods was called.
type publisher struct{ calls []string }

func (p *publisher) Publish(context.Context, string, Event) error {
	p.calls = append(p.calls, "Publish")
	return nil
}

type deferring struct{ publisher }

func (p *deferring) PublishDeferred(context.Context, string, Event) error {
	p.calls = append(p.calls, "PublishDeferred")
	return nil
}

func TestAnEffectIsDeferredOnlyByAPublisherThatCanDeferIt(t *testing.T) {
	cases := []struct {
		name string
		pub  interface {
			Publisher
			called() []string
		}
		want []string
	}{
		{"a deferring publisher is asked to defer", &deferring{}, []string{"PublishDeferred"}},
		{"a plain publisher stores the effect before returning", &publisher{}, []string{"Publish"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := PublishEffect(context.Background(), c.pub, "s", Event{}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, c.pub.called()); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func (p *publisher) called() []string { return p.calls }
