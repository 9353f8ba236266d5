package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/events"
)

func newPublish(g *globals) *cobra.Command {
	var file, subject string
	c := &cobra.Command{
		Use:   "publish -f event.json",
		Short: "Publish CloudEvents (structured JSON) from an external system",
		Long: `Publish one CloudEvent, or a JSON array of them, in CloudEvents structured
JSON form. The event is sent in binary mode on the subject its type belongs
to: io.flotilla.object.applied.v1 / deleted.v1 go to flotilla.input.<key of
the object in data>, exactly as flotilla apply/delete would, and policyd
treats them the same way (it validates them: a bad one is dead-lettered with
the reason). --subject overrides the NATS subject.`,
		Example: `  flotilla publish -f event.json   # {"specversion":"1.0","type":"io.flotilla.object.applied.v1","source":"/ci","id":"1","data":{...}}`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			raw, err := readFileOrStdin(cmd, file)
			if err != nil {
				return err
			}
			var list []json.RawMessage
			if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
				if err := json.Unmarshal(raw, &list); err != nil {
					return fmt.Errorf("%s: %w", file, err)
				}
			} else {
				list = []json.RawMessage{raw}
			}
			bus, err := g.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer bus.Close()
			for i, r := range list {
				var e events.Event
				if err := json.Unmarshal(r, &e); err != nil {
					return fmt.Errorf("%s: event %d: not a CloudEvent in structured JSON: %w", file, i+1, err)
				}
				if err := e.Validate(); err != nil {
					return fmt.Errorf("%s: event %d: %w", file, i+1, err)
				}
				subj := subject
				if subj == "" {
					subj = inputSubjectFor(e)
				}
				if err := bus.Publish(cmd.Context(), subj, e); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "published %s %s on %s\n", e.Type(), e.ID(), subj)
			}
			return nil
		},
	}
	c.Flags().StringVarP(&file, "filename", "f", "", "event file (JSON), or - for stdin")
	c.Flags().StringVar(&subject, "subject", "", "NATS subject (default: derived from the event)")
	_ = c.MarkFlagRequired("filename")
	return c
}

// inputSubjectFor derives the input subject from the object in the event's data.
func inputSubjectFor(e events.Event) string {
	var obj struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	_ = json.Unmarshal(e.Data(), &obj)
	if obj.Kind == "" || obj.Metadata.Name == "" {
		return events.InputSubject(events.ObjectKey{Kind: "Event", Name: e.ID()})
	}
	ns := obj.Metadata.Namespace
	if ns == "" && events.RoleOf(obj.APIVersion, obj.Kind, "") == events.RoleTemplate && obj.Kind != "Namespace" {
		ns = "default"
	}
	return events.InputSubject(events.KeyOf(obj.APIVersion, obj.Kind, ns, obj.Metadata.Name))
}

func readFileOrStdin(cmd *cobra.Command, file string) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(cmd.InOrStdin())
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return b, nil
}
