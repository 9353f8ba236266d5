package policy

import (
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Failure-detection rules (Flotilla's extension from seed 002):
//
//	<metric> <op> <threshold>
//
// metric PodUnavailable (application rules) takes a percentage such as
// 30%; metric API-Server-Timeout (cluster rules) takes a duration such as
// 3min, 90s or 5m. op is > or >=.
const (
	MetricPodUnavailable   = "PodUnavailable"
	MetricAPIServerTimeout = "API-Server-Timeout"
)

var (
	ruleSyntax    = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z-]*)\s*([<>=!]+)\s*(\S+)\s*$`)
	percentSyntax = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)%$`)
	durationUnit  = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)(ms|s|sec|secs|m|min|mins|h|hr|hrs)$`)
)

// DetectionRuleSpec is a parsed rule: Percent (0-100) is the threshold for
// PodUnavailable, Duration the one for API-Server-Timeout.
type DetectionRuleSpec struct {
	Metric    string
	Op        string
	Percent   float64
	Duration  time.Duration
	Inclusive bool
}

// ParseDetectionRule parses one rule; application says which list it is in
// (applicationFailureDetection or clusterFailureDetection). The error text
// is the reason reported for the rule's field path.
func ParseDetectionRule(rule string, application bool) (DetectionRuleSpec, string) {
	m := ruleSyntax.FindStringSubmatch(rule)
	if m == nil {
		return DetectionRuleSpec{}, `invalid value ` + strconv.Quote(rule) + `: must be "<metric> <op> <threshold>", e.g. "PodUnavailable > 30%" or "API-Server-Timeout > 3min"`
	}
	r := DetectionRuleSpec{Metric: m[1], Op: m[2], Inclusive: m[2] == ">="}
	want, other := MetricPodUnavailable, MetricAPIServerTimeout
	if !application {
		want, other = other, want
	}
	switch r.Metric {
	case want:
	case other:
		list := "clusterFailureDetection"
		if !application {
			list = "applicationFailureDetection"
		}
		return r, "unsupported metric " + strconv.Quote(r.Metric) + ": it belongs in " + list
	default:
		return r, "unsupported metric " + strconv.Quote(r.Metric) + ": must be " + want
	}
	if r.Op != ">" && r.Op != ">=" {
		return r, "unsupported operator " + strconv.Quote(r.Op) + ": must be one of >, >="
	}
	th := m[3]
	if r.Metric == MetricPodUnavailable {
		pm := percentSyntax.FindStringSubmatch(th)
		if pm == nil {
			return r, "invalid threshold " + strconv.Quote(th) + ": PodUnavailable takes a percentage such as 30%"
		}
		r.Percent, _ = strconv.ParseFloat(pm[1], 64)
		if r.Percent > 100 {
			return r, "invalid threshold " + strconv.Quote(th) + ": a percentage must be at most 100%"
		}
		return r, ""
	}
	d, ok := parseThresholdDuration(th)
	if !ok {
		return r, "invalid threshold " + strconv.Quote(th) + ": API-Server-Timeout takes a duration such as 3min, 90s or 5m"
	}
	if d <= 0 {
		return r, "invalid threshold " + strconv.Quote(th) + ": must be greater than 0"
	}
	r.Duration = d
	return r, ""
}

func parseThresholdDuration(s string) (time.Duration, bool) {
	if m := durationUnit.FindStringSubmatch(s); m != nil {
		n, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, false
		}
		unit := map[string]time.Duration{
			"ms": time.Millisecond, "s": time.Second, "sec": time.Second, "secs": time.Second,
			"m": time.Minute, "min": time.Minute, "mins": time.Minute,
			"h": time.Hour, "hr": time.Hour, "hrs": time.Hour,
		}[m[2]]
		if n > float64(24*365*time.Hour/unit) {
			return 0, false
		}
		return time.Duration(n * float64(unit)), true
	}
	// Compound Go durations such as 1m30s (or 1min30s).
	d, err := time.ParseDuration(strings.NewReplacer("mins", "m", "min", "m").Replace(s))
	return d, err == nil
}

// Holds reports whether the rule holds for an observed value: the
// unavailable percentage for PodUnavailable, the time the API server has
// been failing for API-Server-Timeout.
func (r DetectionRuleSpec) Holds(percent float64, failing time.Duration) bool {
	if r.Metric == MetricPodUnavailable {
		if r.Inclusive {
			return percent >= r.Percent
		}
		return percent > r.Percent
	}
	if r.Inclusive {
		return failing >= r.Duration
	}
	return failing > r.Duration
}
