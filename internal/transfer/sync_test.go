package transfer

import "testing"

func TestFollowExpunges(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		next, n  uint32
		expunged []uint32
		wantNext uint32
		wantN    uint32
	}{
		{next: 5, n: 20, wantNext: 5, wantN: 20},
		{next: 5, n: 20, expunged: []uint32{2, 2}, wantNext: 3, wantN: 18}, // messages 2 and 3
		{next: 5, n: 20, expunged: []uint32{5, 9}, wantNext: 5, wantN: 18}, // at and after next
		{next: 5, n: 20, expunged: []uint32{4, 3, 9}, wantNext: 3, wantN: 17},
		{next: 1, n: 1, expunged: []uint32{1, 1}, wantNext: 1, wantN: 0},
	} {
		next, n := followExpunges(tc.next, tc.n, tc.expunged)
		if next != tc.wantNext || n != tc.wantN {
			t.Errorf("followExpunges(%d, %d, %v) = %d, %d; want %d, %d", tc.next, tc.n, tc.expunged, next, n, tc.wantNext, tc.wantN)
		}
	}
}
