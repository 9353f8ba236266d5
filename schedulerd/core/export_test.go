package core

import "flag"

// update rewrites the golden files under testdata, in this package's tests
// and in core_test's: go test ./schedulerd/core/ -update
var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// Update is -update for the external test package (core_test), which
// cannot declare the flag again in the same test binary.
func Update() bool { return *update }
