package transfer

import (
	"context"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

func TestCheckLogin(t *testing.T) {
	t.Parallel()
	d := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "pw"}})
	ctx := context.Background()
	if err := CheckLogin(ctx, dovecotSide(d, "alice", "pw"), "source", Tuning{}); err != nil {
		t.Errorf("right password: %v", err)
	}
	tlsSide := dovecotSide(d, "alice", "pw")
	tlsSide.Server = imapconn.Server{Host: d.Host, Port: d.TLSPort, Security: imapconn.SecurityTLS, RootCAs: d.RootCAs()}
	if err := CheckLogin(ctx, tlsSide, "source", Tuning{}); err != nil {
		t.Errorf("over TLS: %v", err)
	}
	err := CheckLogin(ctx, dovecotSide(d, "alice", "nope"), "destination", Tuning{})
	if imapconn.KindOf(err) != imapconn.KindAuth || !strings.HasPrefix(err.Error(), "destination alice at 127.0.0.1:") {
		t.Errorf("wrong password: %v, want an authentication failure naming the destination", err)
	}
	tlsSide.RootCAs = nil
	if err := CheckLogin(ctx, tlsSide, "source", Tuning{}); imapconn.KindOf(err) != imapconn.KindPermanent || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %v", err)
	}
}
