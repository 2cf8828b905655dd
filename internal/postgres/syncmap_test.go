package postgres

import (
	"reflect"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

func TestChunkRoundTrip(t *testing.T) {
	t.Parallel()
	for name, entries := range map[string][]syncstate.Mapping{
		"empty":        {},
		"one":          {{Source: 1, Destination: 1}},
		"extremes":     {{Source: 1, Destination: syncstate.MaxUID, Flags: []string{`\Seen`}}, {Source: syncstate.MaxUID, Destination: 1}},
		"shared flags": {{Source: 5, Destination: 9, Flags: []string{`\Seen`, "$Label1"}}, {Source: 6, Destination: 3, Flags: []string{`\Seen`, "$Label1"}}, {Source: 90, Destination: 4, Flags: []string{"ä"}}},
	} {
		got, err := decodeChunk(encodeChunk(entries))
		if err != nil || !reflect.DeepEqual(nonNilFlags(got), nonNilFlags(entries)) {
			t.Errorf("%s: decode(encode(%+v)) = %+v, %v", name, entries, got, err)
		}
	}
}

func nonNilFlags(entries []syncstate.Mapping) []syncstate.Mapping {
	out := make([]syncstate.Mapping, len(entries))
	for i, e := range entries {
		if e.Flags == nil {
			e.Flags = []string{}
		}
		out[i] = e
	}
	return out
}

// A chunk read back from the database is trusted no further than its
// bytes: whatever they are, decoding fails cleanly or yields entries that
// encode to the same chunk.
func FuzzDecodeChunk(f *testing.F) {
	f.Add(encodeChunk([]syncstate.Mapping{{Source: 3, Destination: 7, Flags: []string{`\Seen`}}, {Source: 4, Destination: 2}}))
	f.Add([]byte{chunkVersion, 0, 1, 5, 5, 0})
	f.Add([]byte{chunkVersion, 1, 200, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := decodeChunk(data)
		if err != nil {
			return
		}
		again, err := decodeChunk(encodeChunk(entries))
		if err != nil || !reflect.DeepEqual(nonNilFlags(again), nonNilFlags(entries)) {
			t.Fatalf("entries %+v re-encoded decode to %+v, %v", entries, again, err)
		}
	})
}
