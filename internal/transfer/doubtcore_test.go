package transfer

import (
	"slices"
	"testing"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// TestSecondCopies: of the copies found for messages whose APPEND went
// unanswered, only those of messages copied again since are second copies
// to expunge; nothing else of the destination is touched, and a message
// leaves doubt only when its fate is known.
func TestSecondCopies(t *testing.T) {
	t.Parallel()
	src := func(uid imap.UID, id string) message { return message{UID: uid, Identity: id} }
	dst := func(uid imap.UID, id string) message { return message{UID: uid, Identity: id} }
	for _, tc := range []struct {
		name       string
		sources    []message // in doubt, still readable on the source
		unmapped   []message // the destination's unmapped copies
		mapped     []uint32  // in doubt, and copied again since
		wantSecond []imap.UID
		wantLeft   []uint32
	}{
		{"the copy came, and the message was copied again: a second copy",
			[]message{src(7, "a")}, []message{dst(40, "a")}, []uint32{7}, []imap.UID{40}, nil},
		{"the copy came, not copied again: the next window adopts it",
			[]message{src(7, "a")}, []message{dst(40, "a")}, nil, nil, []uint32{7}},
		{"no copy yet: still in doubt",
			[]message{src(7, "a")}, []message{dst(40, "b")}, []uint32{7}, nil, []uint32{7}},
		{"a copy of another message is not touched",
			[]message{src(7, "a"), src(8, "b")}, []message{dst(40, "b"), dst(41, "c")}, []uint32{7, 8}, []imap.UID{40}, []uint32{7}},
		{"two messages alike, one copy: one second copy, the other in doubt",
			[]message{src(7, "a"), src(8, "a")}, []message{dst(40, "a")}, []uint32{7, 8}, []imap.UID{40}, []uint32{8}},
		{"two messages alike, two copies: both second copies",
			[]message{src(7, "a"), src(8, "a")}, []message{dst(40, "a"), dst(41, "a")}, []uint32{7, 8}, []imap.UID{40, 41}, nil},
		{"the source no longer has it: out of doubt, its copy untouched",
			nil, []message{dst(40, "a")}, []uint32{7}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := newDestinationPool(tc.unmapped)
			mapped := map[uint32]bool{}
			for _, uid := range tc.mapped {
				mapped[uid] = true
			}
			second, left := secondCopies(tc.sources, &pool, mapped)
			got, _ := second.Nums()
			if !slices.Equal(got, tc.wantSecond) || !slices.Equal(left, tc.wantLeft) {
				t.Errorf("second copies %v, left in doubt %v; want %v and %v", got, left, tc.wantSecond, tc.wantLeft)
			}
		})
	}
}

// TestAfterSweep: messages stay in doubt within the grace, and none after
// it; with none left the in-doubt range is forgotten.
func TestAfterSweep(t *testing.T) {
	t.Parallel()
	since := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	before := syncstate.FolderState{InDoubt: []uint32{7, 8}, InDoubtFrom: 40, InDoubtSince: since, Complete: true}
	for _, tc := range []struct {
		name string
		left []uint32
		now  time.Time
		want syncstate.FolderState
	}{
		{"within the grace", []uint32{8}, since.Add(time.Minute),
			syncstate.FolderState{InDoubt: []uint32{8}, InDoubtFrom: 40, InDoubtSince: since, Complete: true}},
		{"within the grace, none left", nil, since.Add(time.Minute), syncstate.FolderState{Complete: true}},
		{"past the grace", []uint32{8}, since.Add(inDoubtGrace + time.Second), syncstate.FolderState{Complete: true}},
	} {
		if got := afterSweep(before.Clone(), tc.left, tc.now); !slices.Equal(got.InDoubt, tc.want.InDoubt) ||
			got.InDoubtFrom != tc.want.InDoubtFrom || !got.InDoubtSince.Equal(tc.want.InDoubtSince) || got.Complete != tc.want.Complete {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestMirroredDeletions: the entries whose source message is gone are the
// ones mirrored, and only their entries leave the map.
func TestMirroredDeletions(t *testing.T) {
	t.Parallel()
	entry := func(src, dst uint32) syncstate.Mapping { return syncstate.Mapping{Source: src, Destination: dst} }
	unlisted := []syncstate.Mapping{entry(3, 30), entry(5, 50), entry(9, 90)}
	gone := goneAtSource(unlisted, []imap.UID{5}) // 5 was only renumbered while the listing ran
	if got := sourcesOf(gone); got != "3 9" {
		t.Errorf("gone at the source: %v, want 3 and 9", got)
	}
	keep := []syncstate.Mapping{entry(1, 10), entry(3, 30), entry(5, 50), entry(9, 90), entry(12, 120)}
	if kept := sourcesOf(withoutSources(keep, gone)); kept != "1 5 12" {
		t.Errorf("kept %v, want 1, 5 and 12", kept)
	}
	if none := goneAtSource(unlisted, []imap.UID{3, 5, 9}); len(none) != 0 {
		t.Errorf("with every message present, %v were taken for gone", none)
	}
}
