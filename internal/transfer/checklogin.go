package transfer

import "context"

// CheckLogin connects to side as configured, logs in and out, and returns
// nil or a classified *Error naming the side, host and port with the
// server's own words: the connection test of an account (docs/design.md#connection-tests).
// name is "source" or "destination", for the error text.
func CheckLogin(ctx context.Context, side Side, name string, tuning Tuning) error {
	s, err := connect(ctx, &side, name, tuning.withDefaults())
	if err != nil {
		return err
	}
	s.close()
	return nil
}
