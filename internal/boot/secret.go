package boot

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
)

// JobSecret reads the job's secret the way a rank does (MPIGO_SECRET_FD,
// else MPIGO_SECRET), for the helpers mpigo run starts beside the ranks
// (a gateway), and removes it from the environment.
func JobSecret() ([]byte, error) {
	if v, ok := os.LookupEnv(EnvSecretFD); ok {
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
	if s := os.Getenv(EnvSecret); s != "" {
		os.Unsetenv(EnvSecret)
		b, err := hex.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("%s is not hex", EnvSecret)
		}
		return b, nil
	}
	return nil, errors.New("no job secret: " + EnvSecretFD + " and " + EnvSecret + " are unset (mpigo run starts gateways itself)")
}
