package transfer

import (
	"context"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// CheckLogin connects to side as configured, logs in and out, and returns
// nil or a classified *Error naming the side, host and port with the
// server's own words: the connection test of an account (docs/design.md#connection-tests).
// name is "source" or "destination", for the error text.
func CheckLogin(ctx context.Context, side imapconn.Side, name string, tuning Tuning) error {
	s, err := connect(ctx, &side, name, tuning.withDefaults())
	if err != nil {
		return err
	}
	s.Close()
	return nil
}
