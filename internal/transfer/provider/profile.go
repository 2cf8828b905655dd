// Package provider is the engine's provider layer: what each provider's
// servers take without announcing it (profiles, limits) and the daily
// byte budgets kept for them. It holds data and pure decisions only, no
// IMAP, so that storage and the domain read it without the engine.
package provider

import "strings"

// Profile names a provider whose servers have limits they do not
// announce. The engine heeds a destination's: messages larger than it
// takes are not sent (each fails with words saying so), and folder names
// it refuses to create are not planned.
type Profile string

// The profiles. ProfileAuto is told from the server: Gmail by X-GM-EXT-1
// or its host, Microsoft 365 by its hosts; Exchange on premises is not
// told apart from other servers, and is chosen by hand.
const (
	ProfileAuto         Profile = ""
	ProfileGeneric      Profile = "generic"
	ProfileGmail        Profile = "gmail"
	ProfileMicrosoft365 Profile = "microsoft365"
	ProfileExchange     Profile = "exchange"
)

// providerLimits are what a profile's servers take.
type providerLimits struct {
	name string
	// Limits: MaxMessageBytes is the largest message taken by default.
	Limits
	// reserved are top-level folder names that cannot be created.
	reserved []string
}

// providers are the limits the providers document:
//   - Gmail announces APPENDLIMIT=35651584 and takes messages up to 35 MB;
//     it allows about 2 500 MB a day down and 500 MB a day up over IMAP
//     per account, and 15 connections per account ("Gmail bandwidth
//     limits", "IMAP errors: Too many simultaneous connections").
//   - Microsoft 365's default maximum message size is 35 MB, which a
//     tenant may raise to 150 MB; it allows 20 IMAP connections per
//     mailbox ("Exchange Online limits"), and refuses to create a folder
//     named Files (imapsync's FAQ.Office365).
//   - Exchange Server's default message size is 10 MB ("Message size
//     limits in Exchange Server"), and it takes 16 IMAP connections per
//     user (Set-ImapSettings MaxConnectionsPerUser).
var providers = map[Profile]providerLimits{
	ProfileGmail: {name: "Gmail", Limits: Limits{MaxMessageBytes: 35651584,
		DailyDownloadBytes: 2500 * 1000 * 1000, DailyUploadBytes: 500 * 1000 * 1000, AccountConnections: 15}},
	ProfileMicrosoft365: {name: "Microsoft 365", Limits: Limits{MaxMessageBytes: 35 << 20, AccountConnections: 20},
		reserved: []string{"Files"}},
	ProfileExchange: {name: "Exchange", Limits: Limits{MaxMessageBytes: 10 << 20, AccountConnections: 16}},
}

// ServerProfile is the profile of a server before connecting to it: the
// one set, else the one its host name tells (Gmail's extensions are only
// seen once connected).
func ServerProfile(set Profile, host string) Profile {
	if set != ProfileAuto {
		return set
	}
	return DetectProfile(host, false)
}

// DetectProfile tells a provider by the server's host name and whether
// it announces Gmail's extensions; ProfileGeneric when neither says.
func DetectProfile(host string, gmailExtensions bool) Profile {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	switch {
	case gmailExtensions || host == "imap.gmail.com" || host == "imap.googlemail.com":
		return ProfileGmail
	case host == "outlook.office365.com" || host == "outlook.office.com" ||
		strings.HasSuffix(host, ".office365.com") || strings.HasSuffix(host, ".outlook.com"):
		return ProfileMicrosoft365
	}
	return ProfileGeneric
}

// Name is the provider's name in words ("Gmail"), "" for none.
func (p Profile) Name() string { return providers[p].name }

// Reserved are the top-level folder names p's servers refuse to create.
func (p Profile) Reserved() []string { return providers[p].reserved }
