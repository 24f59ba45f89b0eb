package boot

import (
	"os"
	"testing"
)

// setOrUnset sets name to v, or unsets it if v is empty, restoring it
// after the test.
func setOrUnset(t *testing.T, name, v string) {
	t.Helper()
	if v == "" {
		unset(t, name)
		return
	}
	t.Setenv(name, v)
}

func unset(t *testing.T, name string) {
	t.Helper()
	old, had := os.LookupEnv(name)
	os.Unsetenv(name)
	t.Cleanup(func() {
		if had {
			os.Setenv(name, old)
		} else {
			os.Unsetenv(name)
		}
	})
}
