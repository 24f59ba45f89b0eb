package conformance

import (
	"strings"
	"testing"
)

// A fabric transport of the build whose library offers nothing here is
// left out of the matrix: this test says so, so that a run that covered
// less than it seems is visible.
func TestFabricsUsable(t *testing.T) {
	Matrix()
	if len(unusable) > 0 {
		t.Skipf("left out of the conformance matrix: %s (MPIGO_REQUIRE_INTEGRATION=1 runs them and fails)", strings.Join(unusable, "; "))
	}
}
