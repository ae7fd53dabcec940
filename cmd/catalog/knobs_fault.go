//go:build faultknobs

package main

import (
	"os"
	"time"
)

// testClockSkewEnv is a test knob, not a setting, compiled only into the
// fault tier's binary (build tag faultknobs): a duration by which the
// store takes this process's clock to be off, so that the fault tier can
// run a replica whose clock is 10 minutes wrong (integration/fault,
// TestSkewedReplicaClocks). Go reads the time without libc, so faketime
// cannot do it.
const testClockSkewEnv = "CATALOG_TEST_CLOCK_SKEW"

// testClockSkew is the skew testClockSkewEnv asks for; 0 when unset or not
// a duration.
func testClockSkew() time.Duration {
	skew, err := time.ParseDuration(os.Getenv(testClockSkewEnv))
	if err != nil {
		return 0
	}
	return skew
}
