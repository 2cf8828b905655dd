package transfer

import (
	"context"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// session is a logged-in connection to one side (imapconn.Session), with
// what the engine reads through it: folders, messages, counts.
type session struct {
	*imapconn.Session
}

// connect dials side and logs in, with tuning's timeouts.
func connect(ctx context.Context, side *imapconn.Side, name string, tuning Tuning) (*session, error) {
	s, err := imapconn.Connect(ctx, side, name, tuning.timeouts())
	if err != nil {
		return nil, err
	}
	return &session{s}, nil
}
