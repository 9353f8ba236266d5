package framework

import "strings"

// Code is the outcome of one plugin call.
type Code int

// Plugin outcomes.
const (
	// Success: the cluster passes (filters) or the score is valid (scores).
	Success Code = iota
	// Unschedulable: the cluster does not fit; Reasons say why.
	Unschedulable
	// Error: the plugin could not decide (bad input, a bug). The cluster is
	// left out, with the error as its reason.
	Error
	// Skip, from Prepare only: the plugin has nothing to say about this
	// request (e.g. no preferences, no GPUs requested); the core then calls
	// neither its Filter nor its Score for the request.
	Skip
)

func (c Code) String() string {
	switch c {
	case Success:
		return "Success"
	case Unschedulable:
		return "Unschedulable"
	case Error:
		return "Error"
	case Skip:
		return "Skip"
	}
	return "Unknown"
}

// Status is a plugin's answer. A nil *Status means Success, so the common
// path allocates nothing.
type Status struct {
	Code    Code
	Reasons []string
}

// skip is shared: a Skip status carries no data.
var skip = &Status{Code: Skip}

// Skipped returns the Skip status (see Skip).
func Skipped() *Status { return skip }

// Unfit returns an Unschedulable status with the given reasons.
func Unfit(reasons ...string) *Status {
	return &Status{Code: Unschedulable, Reasons: reasons}
}

// IsSuccess reports whether s is nil or has code Success.
func (s *Status) IsSuccess() bool {
	return s == nil || s.Code == Success
}

// IsSkip reports whether s has code Skip.
func (s *Status) IsSkip() bool {
	return s != nil && s.Code == Skip
}

// Message joins the reasons with "; ".
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.Reasons, "; ")
}
