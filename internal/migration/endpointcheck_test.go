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

// TestProviderNotes: a check says what to know of Gmail and Microsoft 365
// when the server shows itself to be one of them.
func TestProviderNotes(t *testing.T) {
	t.Parallel()
	m365Caps := []string{"IMAP4", "IMAP4rev1", "AUTH=PLAIN", "AUTH=XOAUTH2", "SASL-IR", "UIDPLUS", "ID", "UNSELECT", "CHILDREN", "IDLE", "NAMESPACE", "LITERAL+"}
	gmailCaps := []string{"IMAP4rev1", "UNSELECT", "IDLE", "NAMESPACE", "QUOTA", "ID", "XLIST", "CHILDREN", "X-GM-EXT-1", "SASL-IR", "AUTH=XOAUTH2", "AUTH=PLAIN", "AUTH=OAUTHBEARER"}
	oauth := EndpointAuth{Method: AuthOAuth2}
	for _, tc := range []struct {
		name     string
		e        Endpoint
		facts    ServerFacts
		want     []string
		dontWant []string
	}{
		{"Microsoft 365 with passwords", Endpoint{Host: "outlook.office365.com", TLSMode: TLSModeSSL},
			ServerFacts{Greeting: "The Microsoft Exchange IMAP4 service is ready. [TQBOADIAUABS]", Capabilities: m365Caps},
			[]string{"refuses password logins over IMAP: choose OAuth 2.0 (provider microsoft365)"}, []string{"Gmail"}},
		{"Microsoft 365 with OAuth 2.0", Endpoint{Host: "outlook.office365.com", TLSMode: TLSModeSSL, Auth: oauth},
			ServerFacts{Greeting: "The Microsoft Exchange IMAP4 service is ready.", Capabilities: m365Caps}, nil, []string{"refuses password"}},
		{"Exchange of one's own", Endpoint{Host: "mail.example.com", TLSMode: TLSModeSSL},
			ServerFacts{Greeting: "The Microsoft Exchange IMAP4 service is ready.", Capabilities: m365Caps}, nil, []string{"Microsoft 365"}},
		{"Gmail with passwords", Endpoint{Host: "imap.gmail.com", TLSMode: TLSModeSSL},
			ServerFacts{Greeting: "Gimap ready for requests from 192.0.2.1 x1mb", Capabilities: gmailCaps},
			[]string{"takes OAuth 2.0 (provider google) or an app password", "the task's gmail_labels says where each message goes"}, nil},
		{"Gmail with OAuth 2.0", Endpoint{Host: "imap.gmail.com", TLSMode: TLSModeSSL, Auth: oauth},
			ServerFacts{Greeting: "Gimap ready", Capabilities: gmailCaps}, []string{"labels as folders"}, []string{"app password"}},
		{"a server that failed", Endpoint{Host: "imap.gmail.com", TLSMode: TLSModeSSL},
			ServerFacts{Problem: ProblemRefused, Greeting: "Gimap ready"}, nil, []string{"Gmail"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			notes := strings.Join(CheckOf(tc.e, tc.facts).Notes, "\n")
			for _, want := range tc.want {
				if !strings.Contains(notes, want) {
					t.Errorf("notes lack %q:\n%s", want, notes)
				}
			}
			for _, not := range tc.dontWant {
				if strings.Contains(notes, not) {
					t.Errorf("notes say %q:\n%s", not, notes)
				}
			}
		})
	}
}
