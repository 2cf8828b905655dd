package transfer

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// TestLargeMessageStreamsInBoundedMemory copies a 50 MB message between
// two Dovecots (separate processes, so every allocation counted here is
// the engine's): a body must stream from FETCH to APPEND, never be held.
//
// Not parallel: the allocation counter is the whole process's, and
// sequential tests run before any parallel one starts.
func TestLargeMessageStreamsInBoundedMemory(t *testing.T) {
	p := newDovecotPair(t, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	const size = 50 << 20
	p.src.Load(t, "alice", imaptest.Corpus{Messages: []imaptest.Message{{
		Folder: "INBOX",
		Date:   time.Date(2023, 5, 6, 7, 8, 9, 0, time.UTC),
		Body:   bigMessage(size),
	}}})

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := p.migrate(t)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	if res.MessagesCopied != 1 || res.BytesCopied < size-100 {
		t.Fatalf("copied %d messages, %d bytes", res.MessagesCopied, res.BytesCopied)
	}
	t.Logf("copying %d MB allocated %.1f MB in total", size>>20, float64(allocated)/(1<<20))
	if allocated > 16<<20 {
		t.Errorf("copying a %d MB message allocated %d MB: the body is buffered, not streamed", size>>20, allocated>>20)
	}
	wantSameMail(t, p.src.Read(t, "alice"), p.dst.Read(t, "alice@new"))
}

// bigMessage is a message of about size bytes with a base64 attachment.
func bigMessage(size int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: a@example.com\r\nTo: b@example.com\r\nSubject: big\r\nMessage-ID: <big@example.com>\r\n"+
		"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=XX\r\n\r\n--XX\r\nContent-Type: text/plain\r\n\r\nsee attachment\r\n"+
		"--XX\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: base64\r\n\r\n")
	raw := make([]byte, 57)
	rng := rand.New(rand.NewPCG(1, 2))
	for b.Len() < size-100 {
		for i := range raw {
			raw[i] = byte(rng.Uint32())
		}
		b.WriteString(base64.StdEncoding.EncodeToString(raw))
		b.WriteString("\r\n")
	}
	b.WriteString("--XX--\r\n")
	return b.Bytes()
}
