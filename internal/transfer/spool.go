package transfer

import (
	"io"
	"os"

	"github.com/emersion/go-imap/v2"
)

// spool copies a literal to an unlinked-on-cleanup temporary file and
// returns a reader of it.
func spool(literal imap.LiteralReader) (imap.LiteralReader, func(), error) {
	f, err := os.CreateTemp("", "mailmigrate-spool-")
	if err != nil {
		return nil, nil, err
	}
	remove := func() {
		f.Close()
		os.Remove(f.Name())
	}
	size, err := io.Copy(f, literal)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		remove()
		return nil, nil, err
	}
	return &spooledLiteral{Reader: f, size: size}, remove, nil
}
