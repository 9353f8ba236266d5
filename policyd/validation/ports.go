package validation

import "strings"

// The API server's rules on ports, a Service's type and a long-running
// pod's restart policy, which the members would refuse (every member
// Failed, the template accepted): each a field path and a reason.

// checkPort refuses a port number outside 1-65535 at p (absent: allowed
// unless required); zeroOK allows 0 (a hostPort or nodePort left unset).
func checkPort(m map[string]any, p, field string, required, zeroOK bool, rep *report) {
	n, ok := intAt(m, field)
	switch {
	case !ok:
		if required {
			rep.required(p + "." + field)
		}
	case n == 0 && zeroOK:
	case n < 1 || n > 65535:
		rep.errorf(p+"."+field, "invalid value %d: must be between 1 and 65535, inclusive", n)
	}
}

// checkProtocol refuses a protocol other than TCP, UDP and SCTP.
func checkProtocol(m map[string]any, p string, rep *report) {
	switch pr := str(m["protocol"]); pr {
	case "", "TCP", "UDP", "SCTP":
	default:
		rep.errorf(p+".protocol", "unsupported value %q: must be one of SCTP, TCP, UDP", pr)
	}
}

// checkContainerPorts checks the ports of one container at cp.
func checkContainerPorts(c map[string]any, cp string, rep *report) {
	for i, port := range listAt(c, "ports") {
		if port == nil {
			continue
		}
		pp := idx(cp+".ports", i)
		checkPort(port, pp, "containerPort", true, false, rep)
		checkPort(port, pp, "hostPort", false, true, rep)
		checkProtocol(port, pp, rep)
	}
}

// checkLongRunningRestartPolicy: the pods of a Deployment, StatefulSet,
// DaemonSet or ReplicaSet restart Always.
func checkLongRunningRestartPolicy(spec map[string]any, p string, rep *report) {
	if rp := str(spec["restartPolicy"]); rp != "" && rp != "Always" {
		rep.errorf(p+".restartPolicy", "unsupported value %q: only \"Always\" is supported", rp)
	}
}

// checkService checks a v1 Service's type and ports.
func checkService(obj map[string]any, rep *report) {
	spec, _ := obj["spec"].(map[string]any)
	if spec == nil {
		return
	}
	switch t := str(spec["type"]); t {
	case "", "ClusterIP", "NodePort", "LoadBalancer", "ExternalName":
	default:
		rep.errorf("spec.type", "unsupported value %q: must be one of %s", t, strings.Join([]string{"ClusterIP", "ExternalName", "LoadBalancer", "NodePort"}, ", "))
	}
	for i, port := range listAt(spec, "ports") {
		if port == nil {
			continue
		}
		pp := idx("spec.ports", i)
		checkPort(port, pp, "port", true, false, rep)
		checkPort(port, pp, "nodePort", false, true, rep)
		if _, isInt := intAt(port, "targetPort"); isInt {
			checkPort(port, pp, "targetPort", false, false, rep)
		}
		checkProtocol(port, pp, rep)
	}
}
