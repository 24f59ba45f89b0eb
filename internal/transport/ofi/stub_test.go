//go:build !(cgo && mpigo_ofi)

package ofi

import (
	"errors"
	"strings"
	"testing"
)

// A build without the tag has the package's names, and says how to get
// the transport instead of failing obscurely.
func TestNotBuilt(t *testing.T) {
	if _, err := New(Config{Size: 2}); !errors.Is(err, ErrNotBuilt) || !strings.Contains(err.Error(), "-tags mpigo_ofi") {
		t.Errorf("New: %v", err)
	}
	if _, err := Available(); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("Available: %v", err)
	}
	t.Skip("the libfabric transport's own tests need cgo and -tags mpigo_ofi (apt-get install libfabric-dev; .ci/run runs them)")
}
