package hubd

import (
	"strings"
	"testing"
)

func TestConfigValidateNamesEveryProblem(t *testing.T) {
	cases := []struct {
		name string
		cfg  func(*Config)
		want []string
	}{
		{"the defaults with a hub kubeconfig are valid", func(c *Config) { c.HubKubeconfig = "hub.kubeconfig" }, nil},
		{"no hub kubeconfig", func(*Config) {}, []string{"hubKubeconfig"}},
		{"every problem at once", func(c *Config) { c.Instance, c.Interval = "", 0 }, []string{"instance", "hubKubeconfig", "interval"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			c.cfg(&cfg)
			err := cfg.Validate()
			if len(c.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want problems with %v", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w+":") {
					t.Errorf("Validate() = %q, want a problem naming %s", err, w)
				}
			}
		})
	}
}
