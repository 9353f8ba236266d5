package readmodel

import "github.com/flotilla-io/flotilla/events"

// TemplateIndex is Template for every template with a placement or work,
// in one pass over the work: a view of many templates (the console's
// matrix of 10,000) asks for each without reading all the work each time.
func (f Fleet) TemplateIndex() map[events.ObjectKey]Template {
	out := map[events.ObjectKey]Template{}
	for _, p := range f.Decisions {
		out[p.Key] = Template{Placement: p}
	}
	for _, s := range f.Work.Items {
		t := out[s.Key]
		t.Placement.Key = s.Key
		t.Work = append(t.Work, s)
		out[s.Key] = t
	}
	for k, t := range out {
		t.work = Work{Items: t.Work, lost: f.Work.lost}
		out[k] = t
	}
	return out
}
