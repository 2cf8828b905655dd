package transfer

import (
	"context"
	"fmt"
	"strings"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
)

// mailboxOf is the mailbox side logs in to.
func mailboxOf(side *imapconn.Side) provider.Mailbox {
	return provider.Mailbox{Server: strings.ToLower(side.Address()), Login: strings.ToLower(side.Login)}
}

// spendTraffic takes the bytes of the first messages of msgs from the
// daily budgets of both sides' mailboxes, before they are copied, and
// says how many of them may be copied; when none, a side's budget has no
// room and the account pauses (a throttle of KindThrottled) until it
// has. Where both sides keep a budget, the destination's may count a few
// messages the source's had no room for: it errs on the safe side.
func (r *accountAttempt) spendTraffic(ctx context.Context, msgs []message) (int, error) {
	take := len(msgs)
	if r.job.Traffic == nil {
		return take, nil
	}
	sizes := make([]int64, len(msgs))
	for i, msg := range msgs {
		sizes[i] = msg.Size
	}
	for _, s := range []struct {
		side      *imapconn.Side
		name      string
		direction provider.Direction
		profile   provider.Profile
		limit     int64 // the budget in force
		own       int64 // the endpoint's own, 0: the provider's is in force
	}{
		{&r.job.Destination, "destination", provider.Upload, r.destinationProvider.profile, r.destinationProvider.limits.DailyUploadBytes, r.job.Destination.Limits.DailyUploadBytes},
		{&r.job.Source, "source", provider.Download, r.sourceProvider.profile, r.sourceProvider.limits.DailyDownloadBytes, r.job.Source.Limits.DailyDownloadBytes},
	} {
		if s.limit <= 0 {
			continue
		}
		taken, roomAt, err := r.job.Traffic.Spend(ctx, mailboxOf(s.side), s.direction, sizes[:take], s.limit)
		if err != nil {
			return 0, fmt.Errorf("counting the daily bytes: %w", err)
		}
		if taken == 0 {
			spent := &provider.BudgetSpent{Direction: s.direction, Limit: s.limit, At: roomAt}
			if s.own == 0 {
				spent.Provider = s.profile.Name()
			}
			return 0, s.side.Fail(s.name, imapconn.KindThrottled, spent)
		}
		take = taken
	}
	return take, nil
}
