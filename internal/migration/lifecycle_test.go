package migration

import "testing"

func TestPassEnd(t *testing.T) {
	counts := func(byState map[AccountState]int64) AccountCounts {
		c := AccountCounts{ByState: byState}
		for _, n := range byState {
			c.Total += n
		}
		return c
	}
	for _, tc := range []struct {
		canceling bool
		accounts  AccountCounts
		want      TaskState
		message   string
	}{
		{false, counts(map[AccountState]int64{AccountCompleted: 3}), TaskCompleted, "pass finished: completed (3 accounts: 3 completed)"},
		{false, counts(map[AccountState]int64{AccountCompleted: 2, AccountFailed: 1}), TaskCompletedWithErrors,
			"pass finished: completed with errors (3 accounts: 2 completed, 1 failed)"},
		{false, counts(map[AccountState]int64{AccountCompleted: 1, AccountCompletedWithErrors: 1}), TaskCompletedWithErrors,
			"pass finished: completed with errors (2 accounts: 1 completed, 1 completed with errors)"},
		{false, counts(map[AccountState]int64{AccountFailed: 1}), TaskFailed, "pass finished: failed (1 account: 1 failed)"},
		// One account canceled on its own while the others ran on.
		{false, counts(map[AccountState]int64{AccountCompleted: 2, AccountCanceled: 1}), TaskCompletedWithErrors,
			"pass finished: completed with errors (3 accounts: 2 completed, 1 canceled)"},
		{true, counts(map[AccountState]int64{AccountCompleted: 1, AccountCanceled: 4}), TaskCanceled,
			"pass canceled: canceled (5 accounts: 1 completed, 4 canceled)"},
	} {
		got := PassEndState(tc.canceling, tc.accounts)
		if got != tc.want {
			t.Errorf("PassEndState(%v, %v) = %s, want %s", tc.canceling, tc.accounts.ByState, got, tc.want)
		}
		if e := PassEndEvent(7, got, tc.accounts); e.Message != tc.message || e.TaskID != 7 {
			t.Errorf("PassEndEvent: %q, want %q", e.Message, tc.message)
		}
	}
}

// TestFinalPassRefusal: a final pass that would verify nothing is refused
// in words: without accounts, or before any account completed a pass,
// unless a pass is under way (the final one then waits for it and is
// checked again when it would begin).
func TestFinalPassRefusal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		accounts, completed int64
		underWay            bool
		want                error
	}{
		{0, 0, false, ErrFinalWithoutAccounts},
		{0, 0, true, ErrFinalWithoutAccounts},
		{3, 0, false, ErrFinalBeforeAPass},
		{3, 0, true, nil},
		{3, 1, false, nil},
		{3, 3, true, nil},
	} {
		if got := FinalPassRefusal(tc.accounts, tc.completed, tc.underWay); got != tc.want {
			t.Errorf("FinalPassRefusal(%d accounts, %d completed, under way %v) = %v, want %v", tc.accounts, tc.completed, tc.underWay, got, tc.want)
		}
	}
	if kind, _ := KindOf(ErrFinalBeforeAPass); kind != KindConflict {
		t.Errorf("a refused final pass is of kind %v, want a conflict (409)", kind)
	}
}
