package migration

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// ServerProblem names what keeps a connection to an endpoint, as
// configured, from working (the copy engine's CheckServer finds them).
type ServerProblem string

// The problems an endpoint check tells apart; "" is none.
const (
	ProblemNoSuchHost           ServerProblem = "no_such_host"
	ProblemRefused              ServerProblem = "refused"
	ProblemUnreachable          ServerProblem = "unreachable"
	ProblemNotTLS               ServerProblem = "not_tls"
	ProblemTLSExpected          ServerProblem = "tls_expected"
	ProblemUntrustedCertificate ServerProblem = "untrusted_certificate"
	ProblemCertificateName      ServerProblem = "certificate_name"
	ProblemCertificateExpired   ServerProblem = "certificate_expired"
	ProblemTLSFailed            ServerProblem = "tls_failed"
	ProblemNoGreeting           ServerProblem = "no_greeting"
	ProblemNotIMAP              ServerProblem = "not_imap"
	ProblemGreetingRefused      ServerProblem = "greeting_refused"
	ProblemNoStartTLS           ServerProblem = "no_starttls"
	ProblemLoginDisabled        ServerProblem = "login_disabled"
)

// ServerProblems are every ServerProblem but "", in the order the API
// lists them after "none".
var ServerProblems = []ServerProblem{ProblemNoSuchHost, ProblemRefused, ProblemUnreachable, ProblemNotTLS,
	ProblemTLSExpected, ProblemUntrustedCertificate, ProblemCertificateName, ProblemCertificateExpired,
	ProblemTLSFailed, ProblemNoGreeting, ProblemNotIMAP, ProblemGreetingRefused, ProblemNoStartTLS, ProblemLoginDisabled}

// ServerFacts are what connecting to an endpoint found, without logging in.
type ServerFacts struct {
	Problem      ServerProblem
	Detail       string // the error's own words
	Greeting     string
	Capabilities []string // as announced before login
	TLS          *TLSFacts
	Took         time.Duration
}

// TLSFacts describe an endpoint's TLS and certificate.
type TLSFacts struct {
	Version  string
	Subject  string
	Issuer   string
	DNSNames []string
	NotAfter time.Time
	Verified bool
}

// EndpointCheck is an endpoint check in words: what is wrong and what to do.
type EndpointCheck struct {
	ServerFacts
	Address     string
	ProblemText string // what is wrong; "" when the endpoint works as configured
	Advice      string // what to do about it
	Notes       []string
}

// acceptAny is the advice's way out of a certificate the machine does not trust.
const acceptAny = `or tick "Accept any certificate" (unsafe: the connection can then be intercepted, passwords included)`

// problemAdvice is what to do about each problem, for an endpoint check
// and for an attempt that failed to connect alike.
var problemAdvice = map[ServerProblem]string{
	ProblemNoSuchHost:           "Check the host's spelling, or this machine's DNS.",
	ProblemRefused:              "Check the port: IMAP listens on 993 with ssl, on 143 with starttls or plain.",
	ProblemUnreachable:          "Check the address, and that firewalls let this machine reach the port.",
	ProblemNotTLS:               "Choose starttls (or plain) for this port, or the server's ssl port, usually 993.",
	ProblemTLSExpected:          "Choose ssl as the TLS mode for this port.",
	ProblemUntrustedCertificate: "Install the issuing CA's certificate on the machine that runs mailmigrate, " + acceptAny + ".",
	ProblemCertificateName:      "Use a host name the certificate names, " + acceptAny + ".",
	ProblemCertificateExpired:   "Ask the server's administrator to renew it, " + acceptAny + ".",
	ProblemTLSFailed:            "Check the TLS mode. A very old server may offer only TLS versions before 1.2, which this service refuses.",
	ProblemNoGreeting:           "Check the port and the TLS mode: the port may belong to another service, or the server may be overloaded.",
	ProblemNotIMAP:              "Check the port: IMAP listens on 993 (ssl) or 143 (starttls or plain).",
	ProblemGreetingRefused:      "The server may be overloaded, or refuse this machine's address: try again later, or ask its administrator.",
	ProblemNoStartTLS:           "Choose ssl (usually port 993); plain only on a network you trust.",
	ProblemLoginDisabled:        "Choose starttls, or ssl (usually port 993).",
}

// CheckOf puts what a check of e found into words.
func CheckOf(e Endpoint, facts ServerFacts) EndpointCheck {
	c := EndpointCheck{ServerFacts: facts, Address: e.Address(), Notes: checkNotes(e, facts)}
	if facts.Problem != "" {
		c.ProblemText = problemText(e, facts)
		c.Advice = problemAdvice[facts.Problem]
		if c.Advice == "" {
			c.Advice = "Check the host, port and TLS mode."
		}
	}
	return c
}

// problemText says what a check of e found wrong.
func problemText(e Endpoint, facts ServerFacts) string {
	addr := e.Address()
	var t TLSFacts
	if facts.TLS != nil {
		t = *facts.TLS
	}
	switch facts.Problem {
	case ProblemNoSuchHost:
		return fmt.Sprintf("The host name %s does not resolve.", e.Host)
	case ProblemRefused:
		return fmt.Sprintf("Nothing listens on %s (connection refused).", addr)
	case ProblemUnreachable:
		return fmt.Sprintf("No answer from %s.", addr)
	case ProblemNotTLS:
		return fmt.Sprintf("%s does not speak TLS from the first byte (ssl).", addr)
	case ProblemTLSExpected:
		return fmt.Sprintf("%s speaks TLS from the first byte.", addr)
	case ProblemUntrustedCertificate:
		return fmt.Sprintf("The certificate of %s is not signed by an authority this machine trusts: it is self-signed or from a private CA (issuer %q).", addr, t.Issuer)
	case ProblemCertificateName:
		return fmt.Sprintf("The certificate of %s is for %v, not for %s.", addr, t.DNSNames, e.Host)
	case ProblemCertificateExpired:
		return fmt.Sprintf("The certificate of %s is not valid now (valid until %s).", addr, t.NotAfter.UTC().Format(time.DateOnly))
	case ProblemTLSFailed:
		return fmt.Sprintf("TLS with %s failed: %s.", addr, facts.Detail)
	case ProblemNoGreeting:
		return fmt.Sprintf("%s took the connection but sent no IMAP greeting.", addr)
	case ProblemNotIMAP:
		return fmt.Sprintf("%s does not answer as an IMAP server: %s.", addr, facts.Detail)
	case ProblemGreetingRefused:
		return fmt.Sprintf("%s refused the connection: %s.", addr, facts.Greeting)
	case ProblemNoStartTLS:
		return fmt.Sprintf("%s does not offer STARTTLS.", addr)
	case ProblemLoginDisabled:
		return fmt.Sprintf("%s refuses logins without TLS (LOGINDISABLED).", addr)
	}
	return fmt.Sprintf("%s: %s.", addr, facts.Detail)
}

// announces reports whether the server listed capability c.
func (f ServerFacts) announces(c string) bool {
	return slices.ContainsFunc(f.Capabilities, func(have string) bool { return strings.EqualFold(have, c) })
}

// providerNotes say what to know of a provider the server shows itself
// to be: Gmail by its greeting ("Gimap ready") or X-GM-EXT-1, Microsoft
// 365 by Exchange's greeting on Microsoft's hosts.
func providerNotes(e Endpoint, facts ServerFacts) []string {
	if facts.Problem != "" {
		return nil
	}
	var notes []string
	gmail := strings.Contains(facts.Greeting, "Gimap") || facts.announces("X-GM-EXT-1")
	host := strings.ToLower(e.Host)
	microsoft := strings.Contains(facts.Greeting, "Microsoft Exchange") &&
		(strings.HasSuffix(host, ".office365.com") || strings.HasSuffix(host, ".outlook.com") || host == "outlook.office.com")
	switch {
	case gmail && e.Auth.Method != AuthOAuth2:
		notes = append(notes, "This is Gmail or Google Workspace: it takes OAuth 2.0 (provider google) or an app password, not the account's own password.")
	case microsoft && e.Auth.Method != AuthOAuth2:
		notes = append(notes, "This is Microsoft 365 (Exchange Online), which refuses password logins over IMAP: choose OAuth 2.0 (provider microsoft365).")
	}
	if auto := e.Profile == ProfileAuto || e.Profile == ""; auto && gmail {
		notes = append(notes, "Its provider is told to be Gmail: a message over 35 MB is not sent to it, a mailbox moves at most 2500 MB down "+
			"and 500 MB up a day (an account pauses until its budget has room), and 15 connections per mailbox.")
	} else if auto && microsoft {
		notes = append(notes, `Its provider is told to be Microsoft 365: a message over 35 MB is not sent to it (set the endpoint's own limit where the tenant takes larger ones), `+
			`and a folder named Files, which it refuses, is copied to "Files (2)".`)
	}
	if gmail {
		notes = append(notes, `Gmail shows labels as folders and "[Gmail]/All Mail" holds every message again: as a source, the task's gmail_labels says where each message goes `+
			`(first-label, the default: once, in its first label; keywords: once, labels as keywords; folders: once per label), and archived mail goes to Archive. `+
			`Do not exclude All Mail: archived mail is only there.`)
	}
	return notes
}

// checkNotes are what a working endpoint's user should know anyway.
func checkNotes(e Endpoint, facts ServerFacts) []string {
	var notes []string
	if e.TLSMode == TLSModePlain {
		notes = append(notes, "plain: passwords and mail cross the network unencrypted.")
	}
	if t := facts.TLS; t != nil && !t.Verified && e.TLSSkipVerify {
		notes = append(notes, "The certificate is not verified: any certificate is accepted, as configured.")
	}
	if t := facts.TLS; t != nil && t.Verified && time.Until(t.NotAfter) < 14*24*time.Hour {
		notes = append(notes, fmt.Sprintf("The certificate expires on %s.", t.NotAfter.UTC().Format(time.DateOnly)))
	}
	notes = append(notes, providerNotes(e, facts)...)
	if facts.Problem == "" && e.Auth.Method == AuthMaster && e.Auth.MasterForm == MasterAuthzid && !facts.announces("AUTH=PLAIN") {
		notes = append(notes, "The server announces no AUTH=PLAIN, which a master login as authorization identity needs; "+
			"if logins fail, choose the account*master form.")
	}
	if facts.Problem == "" {
		notes = append(notes, "Capabilities are those announced before login; servers list more after it.")
	}
	return notes
}
