package validation

import (
	"strings"

	"github.com/flotilla-io/flotilla/events/policy"
)

// checkDetectionRule validates one failure-detection rule (the grammar and
// its parser live in events/policy, where schedulerd evaluates the rules).
func checkDetectionRule(rule, p string, application bool, rep *report) {
	if strings.TrimSpace(rule) == "" {
		rep.required(p)
		return
	}
	if _, reason := policy.ParseDetectionRule(rule, application); reason != "" {
		rep.errorf(p, "%s", reason)
	}
}
