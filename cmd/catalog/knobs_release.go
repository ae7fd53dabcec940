//go:build !faultknobs

package main

import "time"

// testClockSkew is 0: the release binary has no clock-skew knob (the fault
// tier builds with the faultknobs tag, knobs_fault.go).
func testClockSkew() time.Duration { return 0 }
