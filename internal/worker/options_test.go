package worker

import (
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// TestEveryVerifyDepthReachesTheEngine: each depth of the task option
// verify_copies sets the engine's read-back as it says.
func TestEveryVerifyDepthReachesTheEngine(t *testing.T) {
	want := map[migration.VerifyCopies][2]bool{ // skip the read-back, read bodies whole
		migration.VerifyHeaders: {false, false},
		migration.VerifyCounts:  {true, false},
		migration.VerifyFull:    {false, true},
	}
	for _, depth := range migration.VerifyDepths {
		o := optionsOf(migration.TaskOptions{VerifyCopies: depth})
		if got := [2]bool{o.SkipReadBack, o.ReadBackBodies}; got != want[depth] {
			t.Errorf("verify_copies %s: skip %t, bodies %t; want %v", depth, got[0], got[1], want[depth])
		}
	}
	if len(want) != len(migration.VerifyDepths) {
		t.Errorf("the test knows %d depths, the domain %d", len(want), len(migration.VerifyDepths))
	}
}
