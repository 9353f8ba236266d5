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
)

func (c Code) String() string {
	switch c {
	case Success:
		return "Success"
	case Unschedulable:
		return "Unschedulable"
	case Error:
		return "Error"
	}
	return "Unknown"
}

// Status is a plugin's answer. A nil *Status means Success, so the common
// path allocates nothing.
type Status struct {
	Code    Code
	Reasons []string
}

// NewStatus returns a status with the given code and reasons.
func NewStatus(code Code, reasons ...string) *Status {
	return &Status{Code: code, Reasons: reasons}
}

// Unfit is shorthand for NewStatus(Unschedulable, reasons...).
func Unfit(reasons ...string) *Status {
	return &Status{Code: Unschedulable, Reasons: reasons}
}

// IsSuccess reports whether s is nil or has code Success.
func (s *Status) IsSuccess() bool {
	return s == nil || s.Code == Success
}

// Message joins the reasons with "; ".
func (s *Status) Message() string {
	if s == nil {
		return ""
	}
	return strings.Join(s.Reasons, "; ")
}
