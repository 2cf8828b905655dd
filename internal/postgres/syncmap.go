package postgres

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"

	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// A chunk of a UID map is packed as:
//
//	version byte (1)
//	uvarint count of flag sets; each: uvarint count of flags, each flag
//	  as uvarint length and bytes
//	uvarint count of entries; each: uvarint source UID minus the previous
//	  one's, varint destination UID minus the previous one's, uvarint
//	  index of its flag set
//
// Most messages of a folder share a handful of flag sets, and both UIDs
// mostly grow by one: an entry takes about three bytes.
const chunkVersion = 1

// maxChunkEntries bounds a chunk: a window's replacement rewrites at most
// two partial chunks besides its own.
const maxChunkEntries = 4096

var errBadChunk = errors.New("sync map chunk is malformed")

// encodeChunk packs entries, ordered by source UID.
func encodeChunk(entries []syncstate.Mapping) []byte {
	index := map[string]uint64{}
	var sets [][]string
	setOf := make([]uint64, len(entries))
	for i, e := range entries {
		key := strings.Join(e.Flags, "\x00")
		n, ok := index[key]
		if !ok {
			n = uint64(len(sets))
			index[key] = n
			sets = append(sets, e.Flags)
		}
		setOf[i] = n
	}
	buf := []byte{chunkVersion}
	buf = binary.AppendUvarint(buf, uint64(len(sets)))
	for _, set := range sets {
		buf = binary.AppendUvarint(buf, uint64(len(set)))
		for _, f := range set {
			buf = binary.AppendUvarint(buf, uint64(len(f)))
			buf = append(buf, f...)
		}
	}
	buf = binary.AppendUvarint(buf, uint64(len(entries)))
	var source, destination int64
	for i, e := range entries {
		buf = binary.AppendUvarint(buf, uint64(int64(e.Source)-source))
		buf = binary.AppendVarint(buf, int64(e.Destination)-destination)
		buf = binary.AppendUvarint(buf, setOf[i])
		source, destination = int64(e.Source), int64(e.Destination)
	}
	return buf
}

// chunkReader reads a packed chunk; the first error sticks.
type chunkReader struct {
	buf []byte
	err error
}

func (r *chunkReader) uvarint() uint64 { return readVarint(r, binary.Uvarint) }
func (r *chunkReader) varint() int64   { return readVarint(r, binary.Varint) }

// readVarint reads one number with decode, binary.Uvarint or Varint.
func readVarint[T uint64 | int64](r *chunkReader, decode func([]byte) (T, int)) T {
	v, n := decode(r.buf)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.buf = r.buf[n:]
	return v
}

func (r *chunkReader) fail() { r.err, r.buf = errBadChunk, nil }

// count reads a count of items that take at least one byte each.
func (r *chunkReader) count() int {
	n := r.uvarint()
	if n > uint64(len(r.buf)) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *chunkReader) text() string {
	n := r.count()
	s := string(r.buf[:n])
	r.buf = r.buf[n:]
	return s
}

// decodeChunk unpacks a chunk written by encodeChunk.
func decodeChunk(data []byte) ([]syncstate.Mapping, error) {
	if len(data) == 0 || data[0] != chunkVersion {
		return nil, errBadChunk
	}
	r := &chunkReader{buf: data[1:]}
	sets := make([][]string, r.count())
	for i := range sets {
		sets[i] = make([]string, r.count())
		for j := range sets[i] {
			sets[i][j] = r.text()
		}
	}
	entries := make([]syncstate.Mapping, r.count())
	var source, destination int64
	for i := range entries {
		source += int64(r.uvarint())
		destination += r.varint()
		set := r.uvarint()
		if r.err != nil || set >= uint64(len(sets)) || source > int64(syncstate.MaxUID) || destination < 0 || destination > int64(syncstate.MaxUID) {
			return nil, errBadChunk
		}
		entries[i] = syncstate.Mapping{Source: uint32(source), Destination: uint32(destination), Flags: slices.Clone(sets[set])}
	}
	if r.err != nil || len(r.buf) != 0 {
		return nil, errBadChunk
	}
	return entries, nil
}
