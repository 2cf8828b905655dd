package transfer

import (
	"fmt"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
)

// profileOf returns side's profile: the one set, or the one its server
// shows (caps as announced after login).
func profileOf(side *imapconn.Side, caps imap.CapSet) provider.Profile {
	if side.Profile != provider.ProfileAuto {
		return side.Profile
	}
	return provider.DetectProfile(side.Host, caps.Has(gmailCapability))
}

// sideProvider is what the provider layer tells of one side: its
// provider, for the limits it does not announce, and its limits (its
// endpoint's own, else its profile's).
type sideProvider struct {
	profile provider.Profile
	limits  provider.Limits
}

// providerOf returns side's provider and limits (caps as announced after
// login).
func providerOf(side *imapconn.Side, caps imap.CapSet) sideProvider {
	profile := profileOf(side, caps)
	return sideProvider{profile: profile, limits: provider.EffectiveLimits(profile, side.Limits)}
}

// sizeLimit is the largest message the destination takes and the words
// for one larger: its APPENDLIMIT, else its endpoint's own limit, else
// its profile's default; 0: none known.
func (r *accountAttempt) sizeLimit(announced int64) (int64, func(size int64) string) {
	if announced > 0 {
		return announced, func(size int64) string {
			return fmt.Sprintf("the message of %d bytes is larger than the destination takes (APPENDLIMIT=%d); it stays on the source", size, announced)
		}
	}
	limit := r.destinationProvider.limits.MaxMessageBytes
	switch {
	case limit == 0:
		return 0, nil
	case r.job.Destination.Limits.MaxMessageBytes > 0:
		return limit, func(size int64) string {
			return fmt.Sprintf("the message of %d bytes is larger than the destination endpoint's limit (%d bytes); it stays on the source", size, limit)
		}
	}
	name := r.destinationProvider.profile.Name()
	return limit, func(size int64) string {
		return fmt.Sprintf("the message of %d bytes is larger than %s takes by default (%d bytes); it stays on the source "+
			"(where the destination takes larger messages, raise the endpoint's message size limit)", size, name, limit)
	}
}

// reservedNames are the destination's folder names that cannot be
// created, by its profile.
func (r *accountAttempt) reservedNames() []string { return r.destinationProvider.profile.Reserved() }
