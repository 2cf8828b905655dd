package transfer

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
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

// largeFolderMessages is the size of the folder of TestLargeFolderInBoundedMemory:
// a twentieth of the million of BenchmarkMillionMessageFolder, so that it fits
// the test suite's time on a small machine.
const largeFolderMessages = 50_000

// TestLargeFolderInBoundedMemory copies a folder of many small messages,
// written straight into the source's maildir, and runs again: the engine's
// heap stays bounded by its window, not the folder, on both runs, and the
// second run copies nothing.
//
// Not parallel: the heap measured is the whole process's.
func TestLargeFolderInBoundedMemory(t *testing.T) {
	copyLargeFolder(t, largeFolderMessages, 64<<20)
}

// copyLargeFolder copies n small messages and runs again, failing tb
// when the peak heap of either run passes limit.
func copyLargeFolder(tb testing.TB, n int, limit uint64) {
	p := newDovecotPair(tb, imaptest.LayoutSlash, imaptest.LayoutDotInbox)
	// A maildir destination slows down to a few hundred APPENDs a second
	// past 200 000 messages (Dovecot rewrites its UID list each time).
	p.dst = imaptest.StartDovecot(tb, imaptest.Options{Layout: imaptest.LayoutDotInbox, Sdbox: true, Users: map[string]string{"alice@new": "new-pw"}})
	p.job.Destination = dovecotSide(p.dst, "alice@new", "new-pw")
	p.src.WriteInbox(tb, "alice", n, func(i int) []byte {
		return []byte(fmt.Sprintf("From: a@example.com\r\nTo: b@example.com\r\nSubject: %d\r\nMessage-ID: <%d@large>\r\n\r\nmessage %d\r\n", i, i, i))
	})
	for run, wantCopied := range []int{n, 0} {
		start := time.Now()
		var res Result
		peak := peakHeap(tb, func() {
			var err error
			if res, err = Migrate(context.Background(), p.job); err != nil {
				tb.Fatalf("run %d: %v", run+1, err)
			}
		})
		tb.Logf("run %d: %d messages copied in %s, peak heap %.1f MiB", run+1, res.MessagesCopied, time.Since(start).Round(time.Millisecond), float64(peak)/(1<<20))
		if int(res.MessagesCopied) != wantCopied || !folderResult(tb, res, "INBOX").Verified() {
			tb.Errorf("run %d copied %d, want %d; INBOX %+v", run+1, res.MessagesCopied, wantCopied, folderResult(tb, res, "INBOX"))
		}
		if peak > limit {
			tb.Errorf("run %d: peak heap %d MiB, over %d MiB", run+1, peak>>20, limit>>20)
		}
	}
}

// peakHeap runs f and returns the highest heap in use meanwhile, sampled.
func peakHeap(tb testing.TB, f func()) uint64 {
	tb.Helper()
	runtime.GC()
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var highest uint64
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		ticker := time.NewTicker(5 * time.Millisecond)
		defer ticker.Stop()
		for {
			metrics.Read(sample)
			highest = max(highest, sample[0].Value.Uint64())
			select {
			case <-done:
				peak <- highest
				return
			case <-ticker.C:
			}
		}
	}()
	f()
	close(done)
	return <-peak
}

// BenchmarkMillionMessageFolder copies a folder of a million small
// messages and runs again (make bench), with the same heap limit as
// TestLargeFolderInBoundedMemory.
func BenchmarkMillionMessageFolder(b *testing.B) {
	for b.Loop() {
		copyLargeFolder(b, 1_000_000, 64<<20)
	}
}
