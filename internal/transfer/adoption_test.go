package transfer

import (
	"reflect"
	"testing"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// TestAdoptions: which candidates the destination already holds a copy
// of (an earlier attempt's copy it did not get to record, or mail that
// was there before) become map entries instead of second copies, each
// pool copy adopted once, and what their flags need.
func TestAdoptions(t *testing.T) {
	asIs := func(flags []imap.Flag) []imap.Flag { return flags }
	seen, flagged := imap.FlagSeen, imap.FlagFlagged
	for _, tc := range []struct {
		name        string
		pool        []message
		candidates  []message
		wantAdopted []syncstate.Mapping
		wantUpdates []flagUpdate
		wantRest    []imap.UID
	}{
		{"a copy there, its flags as the source's",
			[]message{{UID: 50, Identity: "a", Flags: []imap.Flag{seen}}},
			[]message{{UID: 1, Identity: "a", Flags: []imap.Flag{seen}}},
			[]syncstate.Mapping{{Source: 1, Destination: 50, Flags: []string{`\Seen`}}}, nil, nil},
		{"a copy there whose flags differ: written as the source's",
			[]message{{UID: 50, Identity: "a", Flags: []imap.Flag{seen}}},
			[]message{{UID: 1, Identity: "a", Flags: []imap.Flag{seen, flagged}}},
			[]syncstate.Mapping{{Source: 1, Destination: 50, Flags: []string{`\Seen`}}},
			[]flagUpdate{{source: 1, destination: 50, add: []imap.Flag{flagged}, want: []imap.Flag{seen, flagged}}}, nil},
		{"no copy: copied",
			[]message{{UID: 50, Identity: "b"}},
			[]message{{UID: 1, Identity: "a"}},
			nil, nil, []imap.UID{1}},
		{"two alike, one copy: one adopted, one copied",
			[]message{{UID: 50, Identity: "a"}},
			[]message{{UID: 1, Identity: "a"}, {UID: 2, Identity: "a"}},
			[]syncstate.Mapping{{Source: 1, Destination: 50}}, nil, []imap.UID{2}},
		{"a copy whose header the destination re-encoded: adopted by likeness",
			[]message{{UID: 50, Identity: "a'", Likeness: "like-a", Size: 1100}},
			[]message{{UID: 1, Identity: "a", Likeness: "like-a", Size: 1000}},
			[]syncstate.Mapping{{Source: 1, Destination: 50}}, nil, nil},
		{"alike but far larger: copied",
			[]message{{UID: 50, Identity: "a'", Likeness: "like-a", Size: 1000 + headerRewriteAllowance + 1}},
			[]message{{UID: 1, Identity: "a", Likeness: "like-a", Size: 1000}},
			nil, nil, []imap.UID{1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool := newDestinationPool(tc.pool)
			adopted, updates, rest := adoptions(tc.candidates, &pool, asIs)
			var restUIDs []imap.UID
			for _, msg := range rest {
				restUIDs = append(restUIDs, msg.UID)
			}
			if !reflect.DeepEqual(normalizeFlags(adopted), normalizeFlags(tc.wantAdopted)) || !reflect.DeepEqual(restUIDs, tc.wantRest) {
				t.Errorf("adopted %+v, copied %v\nwant %+v, %v", adopted, restUIDs, tc.wantAdopted, tc.wantRest)
			}
			if !reflect.DeepEqual(updates, tc.wantUpdates) {
				t.Errorf("flag updates %+v\nwant %+v", updates, tc.wantUpdates)
			}
		})
	}
}

// normalizeFlags makes an entry without flags the same whether its flag
// list is nil or empty.
func normalizeFlags(entries []syncstate.Mapping) []syncstate.Mapping {
	for i := range entries {
		if len(entries[i].Flags) == 0 {
			entries[i].Flags = nil
		}
	}
	return entries
}
