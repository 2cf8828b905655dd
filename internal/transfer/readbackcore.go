package transfer

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/emersion/go-imap/v2"
)

// The read-back's verdict (docs/design.md#verification), pure: which
// copies a destination altered, from what was sent and what it reads
// back. readback.go reads the copies and applies it.

// alteredCopies returns the copies whose read-back differs from what was
// sent, by source UID. A copy not read back (it is not there) is not
// altered: the map's verification counts it missing.
func alteredCopies(sent []sentCopy, read map[imap.UID]digests) []AlteredCopy {
	var altered []AlteredCopy
	for _, c := range sent {
		if got, ok := read[c.destination]; ok {
			if what := difference(c.sent, got); what != "" {
				altered = append(altered, AlteredCopy{SourceUID: uint32(c.source.UID), DestinationUID: uint32(c.destination), What: what})
			}
		}
	}
	slices.SortFunc(altered, func(a, b AlteredCopy) int { return int(a.SourceUID) - int(b.SourceUID) })
	return altered
}

// difference says how a copy read back differs from what was sent (or
// from its source message), by its size, the digest of its header where
// both have one and, when bodies are compared, the digest of all its
// bytes; empty when it does not.
func difference(sent, got digests) string {
	switch {
	case got.size != sent.size:
		return fmt.Sprintf("its size went from %d to %d bytes", sent.size, got.size)
	case sent.header != nil && got.header != nil && !bytes.Equal(got.header, sent.header):
		return "its header was rewritten (same size, other bytes)"
	case sent.body != nil && got.body != nil && !bytes.Equal(got.body, sent.body):
		return "its body was rewritten (same size and header, other bytes)"
	}
	return ""
}
