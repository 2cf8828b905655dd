package comparison

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

// The corpus at scale 1: 8 accounts of 2 500 messages and 75 MB each, about
// 600 MB in all. Of each account's messages 20 are large (a base64
// attachment of about 2 MB), the others the corpus builder's 1–50 KB mix.
const (
	accountCount     = 8
	accountMessages  = 2500
	accountBytes     = 75_000_000
	accountLarge     = 20
	scaleEnv         = "MAILMIGRATE_BENCH_SCALE"
	minLargeBodySize = 64 << 10
)

// account is one mailbox to migrate: its login on the source and the
// empty one it goes to on the destination.
type account struct {
	srcLogin, srcPassword string
	dstLogin, dstPassword string
}

// corpus is a set of mailboxes to migrate, and the parallelisms it is
// migrated with.
type corpus struct {
	name         string
	accounts     int
	parallelisms []int
	options      func(i int, scale float64) imaptest.CorpusOptions
}

// corpora are what a hosting migration meets: few large mailboxes, and
// many small ones (imaptest's corpus has 15 folders).
var corpora = []corpus{
	{name: "large", accounts: accountCount, parallelisms: []int{1, 4}, options: corpusOptions},
	{name: "small", accounts: 200, parallelisms: []int{4}, options: func(i int, _ float64) imaptest.CorpusOptions {
		return imaptest.CorpusOptions{Seed: int64(2000 + i), Messages: 40}
	}},
}

func accounts(n int) []account {
	list := make([]account, n)
	for i := range list {
		list[i] = account{
			srcLogin: fmt.Sprintf("src%03d", i+1), srcPassword: fmt.Sprintf("src-pw-%d", i+1),
			dstLogin: fmt.Sprintf("dst%03d", i+1), dstPassword: fmt.Sprintf("dst-pw-%d", i+1),
		}
	}
	return list
}

// source is the loaded source Dovecot and what it holds, read back over
// IMAP: the reference every destination is compared with.
type source struct {
	dovecot  *imaptest.Dovecot
	accounts []account
	want     []imaptest.Corpus // per account
	messages int
	bytes    int64
}

// benchScale reads MAILMIGRATE_BENCH_SCALE: 1 unless set.
func benchScale(b *testing.B) float64 {
	b.Helper()
	v := os.Getenv(scaleEnv)
	if v == "" {
		return 1
	}
	scale, err := strconv.ParseFloat(v, 64)
	if err != nil || scale <= 0 || scale > 10 {
		b.Fatalf("%s=%q: want a number in (0, 10], such as 0.1", scaleEnv, v)
	}
	return scale
}

// loadSource starts the source Dovecot (LayoutSlash), fills every account
// of c with its own corpus and reads them back.
func loadSource(b *testing.B, c corpus, scale float64) *source {
	b.Helper()
	n := c.accounts
	if n > accountCount { // many small accounts: scale their number
		n = max(int(math.Round(float64(n)*scale)), 2)
	}
	s := startSource(b, n)
	for i, a := range s.accounts {
		s.dovecot.Load(b, a.srcLogin, imaptest.BuildCorpus(c.options(i, scale)))
		s.readBack(b, a)
	}
	return s
}

// readBack reads account a's mailbox as loaded: the reference its
// destinations are compared with, counted into the source's figures.
func (s *source) readBack(b *testing.B, a account) {
	b.Helper()
	want := s.dovecot.Read(b, a.srcLogin)
	s.want = append(s.want, want)
	s.messages += len(want.Messages)
	for _, m := range want.Messages {
		s.bytes += int64(len(m.Body))
	}
}

// corpusOptions sizes account i's corpus: its own seed, and large
// messages sized so that the account holds accountBytes × scale.
func corpusOptions(i int, scale float64) imaptest.CorpusOptions {
	total := max(int(math.Round(accountMessages*scale)), imaptest.MinMessages+1)
	large := max(int(math.Round(accountLarge*scale)), 1)
	opts := imaptest.CorpusOptions{Seed: int64(1000 + i), Messages: total - large}
	var small int64
	for _, m := range imaptest.BuildCorpus(opts).Messages {
		small += int64(len(m.Body))
	}
	opts.LargeMessages = large
	opts.LargeSize = max(int((accountBytes*scale-float64(small))/float64(large)), minLargeBodySize)
	return opts
}

// startSource starts the source Dovecot (LayoutSlash) with n empty
// accounts.
func startSource(b *testing.B, n int) *source {
	b.Helper()
	s := &source{accounts: accounts(n)}
	users := map[string]string{}
	for _, a := range s.accounts {
		users[a.srcLogin] = a.srcPassword
	}
	s.dovecot = imaptest.StartDovecot(b, imaptest.Options{Layout: imaptest.LayoutSlash, Users: users})
	return s
}
