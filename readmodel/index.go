package readmodel

import "github.com/flotilla-io/flotilla/events"

// TemplateIndex is Template for every template with a placement or work,
// in one pass over the work: a view of many templates (the console's
// matrix of 10,000) asks for each without reading all the work each time.
// Each is what Fleet.Template returns for its key.
func (f Fleet) TemplateIndex() map[events.ObjectKey]Template {
	placements := map[events.ObjectKey]events.PlacementDecision{}
	work := map[events.ObjectKey][]events.WorkStatus{}
	for _, p := range f.Decisions {
		placements[p.Key] = p
	}
	for _, s := range f.Work.Items {
		work[s.Key] = append(work[s.Key], s)
		if _, ok := placements[s.Key]; !ok {
			placements[s.Key] = events.PlacementDecision{Key: s.Key}
		}
	}
	out := make(map[events.ObjectKey]Template, len(placements))
	for k, p := range placements {
		out[k] = templateOf(p, Work{Items: work[k], lost: f.Work.lost})
	}
	return out
}
