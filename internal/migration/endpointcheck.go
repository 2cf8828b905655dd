package migration

import (
	"fmt"
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
	Address string
	Problem string // what is wrong; "" when the endpoint works as configured
	Advice  string // what to do about it
	Notes   []string
}

// acceptAny is the advice's way out of a certificate the machine does not trust.
const acceptAny = `or tick "Accept any certificate" (unsafe: the connection can then be intercepted, passwords included)`

// CheckOf puts what a check of e found into words.
func CheckOf(e Endpoint, facts ServerFacts) EndpointCheck {
	c := EndpointCheck{ServerFacts: facts, Address: e.Address()}
	addr := c.Address
	issuer := ""
	if facts.TLS != nil {
		issuer = facts.TLS.Issuer
	}
	switch facts.Problem {
	case "":
	case ProblemNoSuchHost:
		c.Problem, c.Advice = fmt.Sprintf("The host name %s does not resolve.", e.Host),
			"Check the host's spelling, or this machine's DNS."
	case ProblemRefused:
		c.Problem, c.Advice = fmt.Sprintf("Nothing listens on %s (connection refused).", addr),
			"Check the port: IMAP listens on 993 with ssl, on 143 with starttls or plain."
	case ProblemUnreachable:
		c.Problem, c.Advice = fmt.Sprintf("No answer from %s.", addr),
			"Check the address, and that firewalls let this machine reach the port."
	case ProblemNotTLS:
		c.Problem, c.Advice = fmt.Sprintf("%s does not speak TLS from the first byte (ssl).", addr),
			"Choose starttls (or plain) for this port, or the server's ssl port, usually 993."
	case ProblemTLSExpected:
		c.Problem, c.Advice = fmt.Sprintf("%s speaks TLS from the first byte.", addr),
			"Choose ssl as the TLS mode for this port."
	case ProblemUntrustedCertificate:
		c.Problem = fmt.Sprintf("The certificate of %s is not signed by an authority this machine trusts: it is self-signed or from a private CA (issuer %q).", addr, issuer)
		c.Advice = "Install the issuing CA's certificate on the machine that runs mailmigrate, " + acceptAny + "."
	case ProblemCertificateName:
		names := ""
		if facts.TLS != nil {
			names = fmt.Sprint(facts.TLS.DNSNames)
		}
		c.Problem = fmt.Sprintf("The certificate of %s is for %s, not for %s.", addr, names, e.Host)
		c.Advice = "Use a host name the certificate names, " + acceptAny + "."
	case ProblemCertificateExpired:
		until := ""
		if facts.TLS != nil {
			until = facts.TLS.NotAfter.UTC().Format(time.DateOnly)
		}
		c.Problem = fmt.Sprintf("The certificate of %s is not valid now (valid until %s).", addr, until)
		c.Advice = "Ask the server's administrator to renew it, " + acceptAny + "."
	case ProblemTLSFailed:
		c.Problem, c.Advice = fmt.Sprintf("TLS with %s failed: %s.", addr, facts.Detail),
			"Check the TLS mode. A very old server may offer only TLS versions before 1.2, which this service refuses."
	case ProblemNoGreeting:
		c.Problem, c.Advice = fmt.Sprintf("%s took the connection but sent no IMAP greeting.", addr),
			"Check the port and the TLS mode: the port may belong to another service, or the server may be overloaded."
	case ProblemNotIMAP:
		c.Problem, c.Advice = fmt.Sprintf("%s does not answer as an IMAP server: %s.", addr, facts.Detail),
			"Check the port: IMAP listens on 993 (ssl) or 143 (starttls or plain)."
	case ProblemGreetingRefused:
		c.Problem, c.Advice = fmt.Sprintf("%s refused the connection: %s.", addr, facts.Greeting),
			"The server may be overloaded, or refuse this machine's address: try again later, or ask its administrator."
	case ProblemNoStartTLS:
		c.Problem, c.Advice = fmt.Sprintf("%s does not offer STARTTLS.", addr),
			"Choose ssl (usually port 993); plain only on a network you trust."
	case ProblemLoginDisabled:
		c.Problem, c.Advice = fmt.Sprintf("%s refuses logins without TLS (LOGINDISABLED).", addr),
			"Choose starttls, or ssl (usually port 993)."
	default:
		c.Problem, c.Advice = fmt.Sprintf("%s: %s.", addr, facts.Detail), "Check the host, port and TLS mode."
	}
	c.Notes = checkNotes(e, facts)
	return c
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
	if facts.Problem == "" {
		notes = append(notes, "Capabilities are those announced before login; servers list more after it.")
	}
	return notes
}
