package migration

import (
	"strings"
	"testing"
	"time"
)

// TestEveryServerProblemHasWords: each problem a check can find reads as
// a sentence naming the address, with advice; the certificate problems
// offer the way out and say it is unsafe.
func TestEveryServerProblemHasWords(t *testing.T) {
	t.Parallel()
	e := Endpoint{Host: "imap.example.org", Port: 993, TLSMode: TLSModeSSL}
	tls := &TLSFacts{Issuer: "Acme Private CA", DNSNames: []string{"mail.example.org"}, NotAfter: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)}
	for _, p := range ServerProblems {
		c := CheckOf(e, ServerFacts{Problem: p, Detail: "the server's words", TLS: tls})
		if c.ProblemText == "" || c.Advice == "" || !strings.HasSuffix(c.ProblemText, ".") || !strings.HasSuffix(c.Advice, ".") {
			t.Errorf("%s: problem %q, advice %q", p, c.ProblemText, c.Advice)
		}
		if p != ProblemNoSuchHost && !strings.Contains(c.ProblemText, "imap.example.org:993") {
			t.Errorf("%s: %q does not name the address", p, c.ProblemText)
		}
	}
	for p, want := range map[ServerProblem]string{
		ProblemUntrustedCertificate: `"Acme Private CA"`,
		ProblemCertificateName:      "[mail.example.org], not for imap.example.org",
		ProblemCertificateExpired:   "valid until 2024-05-01",
	} {
		c := CheckOf(e, ServerFacts{Problem: p, TLS: tls})
		if !strings.Contains(c.ProblemText, want) || !strings.Contains(c.Advice, `"Accept any certificate" (unsafe`) {
			t.Errorf("%s: %q / %q", p, c.ProblemText, c.Advice)
		}
	}
	ok := CheckOf(Endpoint{Host: "h", Port: 143, TLSMode: TLSModePlain}, ServerFacts{})
	if ok.ProblemText != "" || ok.Advice != "" || len(ok.Notes) != 2 || !strings.Contains(ok.Notes[0], "unencrypted") {
		t.Errorf("a working plain endpoint: %+v", ok)
	}
}
