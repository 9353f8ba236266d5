package simulate

import (
	"slices"
	"strconv"
	"sync"

	"github.com/flotilla-io/flotilla/events"
	"github.com/flotilla-io/flotilla/events/policy"
	"github.com/flotilla-io/flotilla/executord/render"
	"github.com/flotilla-io/flotilla/policyd/binding"
)

// claims remembers which policy claims a template and which overrides
// apply to it, by what of the template the policies' resource selectors
// can see: apiVersion, kind, namespace, the name only when a selector
// names a resource, and only the labels some label selector reads (a
// label selector's answer depends on the labels of its own keys alone).
// Templates alike in all of these (most of a large input) get the same
// answers from binding.Claim and policy.ApplicableOverrides, which are
// then computed once. The answers are shared and read-only.
type claims struct {
	nameMatters bool
	labelKeys   []string // sorted
	mu          sync.RWMutex
	memo        map[string]*claim
}

type claim struct {
	policy    *binding.Candidate // nil: no policy matches
	overrides []policy.OverridePolicy

	// What renderAll derives from the overrides, computed once.
	once       sync.Once
	policyName []string        // render.PolicyName of each override
	touched    map[string]bool // replica field -> does some override touch it
	mu         sync.RWMutex
	matchings  map[string]*matching // by rule bits
}

// matching returns matchingOverrides of the claim's overrides for bits,
// made once per distinct bits.
func (c *claim) matching(bits []byte) *matching {
	c.mu.RLock()
	m, ok := c.matchings[string(bits)]
	c.mu.RUnlock()
	if ok {
		return m
	}
	m = matchingOverrides(c.overrides, c.names(), bits)
	c.mu.Lock()
	if prev, ok := c.matchings[string(bits)]; ok {
		m = prev
	} else if len(c.matchings) < 1024 {
		if c.matchings == nil {
			c.matchings = make(map[string]*matching)
		}
		c.matchings[string(bits)] = m
	}
	c.mu.Unlock()
	return m
}

// names returns render.PolicyName of each override.
func (c *claim) names() []string {
	c.derive()
	return c.policyName
}

// touch reports whether some override may read or write spec.<field>.
func (c *claim) touch(field string) bool {
	c.derive()
	return c.touched[field]
}

func (c *claim) derive() {
	c.once.Do(func() {
		c.policyName = make([]string, len(c.overrides))
		c.touched = map[string]bool{}
		for i := range c.overrides {
			c.policyName[i] = render.PolicyName(&c.overrides[i])
			for _, field := range []string{"replicas", "parallelism"} {
				c.touched[field] = c.touched[field] || touches(&c.overrides[i], field)
			}
		}
	})
}

func newClaims(pols []binding.Candidate, ovs []policy.OverridePolicy) *claims {
	c := &claims{memo: map[string]*claim{}}
	keys := map[string]bool{}
	see := func(sels []policy.ResourceSelector) {
		for _, s := range sels {
			if s.Name != "" {
				c.nameMatters = true
			}
			if ls := s.LabelSelector; ls != nil {
				for k := range ls.MatchLabels {
					keys[k] = true
				}
				for _, e := range ls.MatchExpressions {
					keys[e.Key] = true
				}
			}
		}
	}
	for i := range pols {
		see(pols[i].Policy.Spec.ResourceSelectors)
	}
	for i := range ovs {
		see(ovs[i].Spec.ResourceSelectors)
	}
	for k := range keys {
		c.labelKeys = append(c.labelKeys, k)
	}
	slices.Sort(c.labelKeys)
	return c
}

// get returns the answers for the template's facts and current policy,
// computing them with compute the first time.
func (c *claims) get(r policy.ResourceFacts, current *events.PolicyRef, compute func() *claim) *claim {
	var buf [256]byte
	key := buf[:0]
	str := func(s string) {
		key = strconv.AppendInt(key, int64(len(s)), 10)
		key = append(key, ':')
		key = append(key, s...)
	}
	str(r.APIVersion)
	str(r.Kind)
	str(r.Namespace)
	if c.nameMatters {
		str(r.Name)
	}
	for _, k := range c.labelKeys {
		if v, ok := r.Labels[k]; ok {
			key = append(key, '+')
			str(v)
		} else {
			key = append(key, '-')
		}
	}
	if current != nil {
		key = append(key, '@')
		str(current.Kind)
		str(current.Namespace)
		str(current.Name)
	}
	c.mu.RLock()
	got, ok := c.memo[string(key)]
	c.mu.RUnlock()
	if ok {
		return got
	}
	got = compute()
	c.mu.Lock()
	if prev, ok := c.memo[string(key)]; ok {
		got = prev
	} else {
		c.memo[string(key)] = got
	}
	c.mu.Unlock()
	return got
}
