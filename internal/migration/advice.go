package migration

import "fmt"

// FailureKind classifies what stopped an account's attempt, for the advice a
// person gets with the error.
type FailureKind string

// The kinds of failure the engine tells apart; "" is unknown.
const (
	FailureAuth      FailureKind = "auth"      // the server refused the login
	FailureQuota     FailureKind = "quota"     // the destination mailbox is full
	FailureRefused   FailureKind = "refused"   // the server refused a command
	FailureTransient FailureKind = "transient" // the network or the server went away
	FailureToken     FailureKind = "token"     // the authorization server refused an OAuth 2.0 token
	FailureThrottled FailureKind = "throttled" // the server kept asking to slow down
)

// Advice says what to do about a failed attempt, in words: which side, which
// login, and the next step. problem, when the connection itself failed for
// a reason an endpoint check names (a certificate, a closed port), gives
// that check's advice.
func Advice(kind FailureKind, problem ServerProblem, blamed Party) string {
	if advice := problemAdvice[problem]; advice != "" {
		return advice
	}
	if advice := sharedCredentialAdvice(kind, blamed); advice != "" {
		return advice
	}
	switch kind {
	case FailureAuth:
		return fmt.Sprintf("Check the %s login %s and its password (Edit the account), then retry the account; "+
			"a login test first spares it the server's lock-out after repeated failures.", blamed.Side, blamed.Login)
	case FailureToken:
		return fmt.Sprintf("The %s endpoint's authorization server handed out no token for %s: mend what it says "+
			"(the account's refresh token, or the endpoint's application settings), then retry the account.", blamed.Side, blamed.Login)
	case FailureThrottled:
		return fmt.Sprintf("The %s server kept asking to slow down; the account is tried again later. "+
			"Fewer parallel accounts (the task's options) spare its limits.", blamed.Side)
	case FailureQuota:
		return fmt.Sprintf("Make room in %s's mailbox on the destination or raise its quota, then retry the account: what was copied stays.", blamed.Login)
	case FailureRefused:
		return fmt.Sprintf("The %s server refused what was asked; its words say why. Retry once it is fixed: nothing is copied twice.", blamed.Side)
	case FailureTransient:
		return fmt.Sprintf("The %s server at %s:%d could not be reached or went away; the service retries the account by itself. "+
			"If it keeps failing, check the endpoint (Test connection).", blamed.Side, blamed.Host, blamed.Port)
	}
	return ""
}

// sharedCredentialAdvice points a refused login at the endpoint when the
// side logs in with the endpoint's master login or OAuth 2.0 application:
// every account of the endpoint fails alike, and none has a password of
// its own to check.
func sharedCredentialAdvice(kind FailureKind, blamed Party) string {
	if blamed.Shared == "" || (kind != FailureAuth && kind != FailureToken) {
		return ""
	}
	return fmt.Sprintf("The %s endpoint's %s was refused for %s: check it (Edit the endpoint: its password, "+
		"and that it may act for other users), then retry; the other accounts of the endpoint fail alike until then.",
		blamed.Side, blamed.Shared, blamed.Login)
}

// TestFailureWords are a login test's failure on one side in words: what
// went wrong, and what to do about it (Advice), so that a test's result
// says more than "connection refused". A network failure a test meets is
// no attempt's to retry: it points at the endpoint.
func TestFailureWords(text string, kind FailureKind, problem ServerProblem, blamed Party) string {
	advice := Advice(kind, problem, blamed)
	if kind == FailureTransient && problemAdvice[problem] == "" {
		advice = fmt.Sprintf("The %s server at %s:%d could not be reached or went away: check the endpoint (Test connection), then test again.",
			blamed.Side, blamed.Host, blamed.Port)
	}
	if advice == "" {
		return text
	}
	return endSentence(text) + " What to do: " + advice
}
