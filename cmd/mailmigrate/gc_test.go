package main

import (
	"runtime/debug"
	"testing"
)

// The service runs its collector at serviceGCPercent, unless the operator's
// GOGC says otherwise: then the runtime's reading of it stands.
func TestServiceGCTargetYieldsToGOGC(t *testing.T) {
	saved := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(saved) })
	env := func(gogc string) func(string) string {
		return func(name string) string {
			if name == "GOGC" {
				return gogc
			}
			return ""
		}
	}

	tuneGC(env(""))
	if got := debug.SetGCPercent(100); got != serviceGCPercent {
		t.Errorf("without GOGC the target is %d, want %d", got, serviceGCPercent)
	}
	tuneGC(env("50")) // the runtime stands at 100, as if it had read GOGC
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set the target is %d, want the runtime's 100 left as it is", got)
	}
}
