package transfer

import (
	"reflect"
	"testing"

	"github.com/emersion/go-imap/v2"
)

// TestAlteredCopies: the read-back's verdict on each copy sent, from the
// digests sent and read back. A destination that rewrites mail is told
// apart from one that lost it, and a copy left as sent passes.
func TestAlteredCopies(t *testing.T) {
	header, body := []byte("header digest"), []byte("body digest")
	sentAs := func(sourceUID, destinationUID imap.UID, d digests) sentCopy {
		return sentCopy{source: message{UID: sourceUID}, destination: destinationUID, sent: d}
	}
	for _, tc := range []struct {
		name string
		sent []sentCopy
		read map[imap.UID]digests
		want []AlteredCopy
	}{
		{"as sent", []sentCopy{sentAs(1, 11, digests{size: 100, header: header})},
			map[imap.UID]digests{11: {size: 100, header: header}}, nil},
		{"not there: missing, not altered", []sentCopy{sentAs(1, 11, digests{size: 100, header: header})},
			map[imap.UID]digests{}, nil},
		{"grown", []sentCopy{sentAs(1, 11, digests{size: 100, header: header})},
			map[imap.UID]digests{11: {size: 120, header: header}},
			[]AlteredCopy{{SourceUID: 1, DestinationUID: 11, What: "its size went from 100 to 120 bytes"}}},
		{"header rewritten in place (Cyrus's munge8bit)", []sentCopy{sentAs(1, 11, digests{size: 100, header: header})},
			map[imap.UID]digests{11: {size: 100, header: []byte("other")}},
			[]AlteredCopy{{SourceUID: 1, DestinationUID: 11, What: "its header was rewritten (same size, other bytes)"}}},
		{"header not digested on one side: size alone", []sentCopy{sentAs(1, 11, digests{size: 100})},
			map[imap.UID]digests{11: {size: 100, header: header}}, nil},
		{"body rewritten, bodies compared", []sentCopy{sentAs(1, 11, digests{size: 100, header: header, body: body})},
			map[imap.UID]digests{11: {size: 100, header: header, body: []byte("other")}},
			[]AlteredCopy{{SourceUID: 1, DestinationUID: 11, What: "its body was rewritten (same size and header, other bytes)"}}},
		{"in source order", []sentCopy{sentAs(9, 21, digests{size: 5}), sentAs(3, 22, digests{size: 5}), sentAs(5, 23, digests{size: 5})},
			map[imap.UID]digests{21: {size: 6}, 22: {size: 5}, 23: {size: 7}},
			[]AlteredCopy{{SourceUID: 5, DestinationUID: 23, What: "its size went from 5 to 7 bytes"},
				{SourceUID: 9, DestinationUID: 21, What: "its size went from 5 to 6 bytes"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := alteredCopies(tc.sent, tc.read); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("altered %+v\nwant %+v", got, tc.want)
			}
		})
	}
}
