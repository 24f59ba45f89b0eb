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

// withVars is env with the NAME, VALUE pairs kv added (or replaced).
func withVars(env lookupFunc, kv ...string) lookupFunc {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) {
		if v, ok := m[k]; ok {
			return v, true
		}
		return env(k)
	}
}
