package boot

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
)

// JobSecret reads the job's secret the way a rank does (MPIGO_SECRET_FD,
// else MPIGO_SECRET, both read through env), for the helpers mpigo run
// starts beside the ranks (a gateway), and removes both variables from the
// process's environment.
func JobSecret(env func(string) (string, bool)) ([]byte, error) {
	b, err := jobSecret(env)
	if err == nil && b == nil {
		err = errors.New("no job secret: " + EnvSecretFD + " and " + EnvSecret + " are unset (mpigo run starts gateways itself)")
	}
	return b, err
}

// jobSecret reads the job's secret from the descriptor MPIGO_SECRET_FD
// names, else from MPIGO_SECRET (hex); nil if neither is set. Whatever it
// finds it removes from the process's environment, so that programs the
// rank starts do not inherit it: mpigo run passes the secret on a
// descriptor (a pipe, or a file already deleted), of which, unlike the
// environment, nothing stays readable in /proc once read.
func jobSecret(env lookupFunc) ([]byte, error) {
	s, hasSecret := env(EnvSecret)
	if hasSecret {
		os.Unsetenv(EnvSecret)
	}
	if v, ok := env(EnvSecretFD); ok {
		os.Unsetenv(EnvSecretFD)
		s, err := readSecretFD(v)
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", EnvSecretFD, v, err)
		}
		b, err := hex.DecodeString(s)
		if err != nil || len(b) == 0 {
			return nil, fmt.Errorf("%s=%s: the secret is not hex", EnvSecretFD, v)
		}
		return b, nil
	}
	if s == "" {
		return nil, nil
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s is not hex", EnvSecret)
	}
	return b, nil
}
