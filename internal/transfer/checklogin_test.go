package transfer

import (
	"context"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
)

func TestCheckLogin(t *testing.T) {
	t.Parallel()
	d := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "pw"}})
	ctx := context.Background()
	if err := CheckLogin(ctx, dovecotSide(d, "alice", "pw"), "source", Tuning{}); err != nil {
		t.Errorf("right password: %v", err)
	}
	tlsSide := dovecotSide(d, "alice", "pw")
	tlsSide.Server = Server{Host: d.Host, Port: d.TLSPort, Security: SecurityTLS, RootCAs: d.RootCAs()}
	if err := CheckLogin(ctx, tlsSide, "source", Tuning{}); err != nil {
		t.Errorf("over TLS: %v", err)
	}
	err := CheckLogin(ctx, dovecotSide(d, "alice", "nope"), "destination", Tuning{})
	if KindOf(err) != KindAuth || !strings.HasPrefix(err.Error(), "destination alice at 127.0.0.1:") {
		t.Errorf("wrong password: %v, want an authentication failure naming the destination", err)
	}
	tlsSide.RootCAs = nil
	if err := CheckLogin(ctx, tlsSide, "source", Tuning{}); KindOf(err) != KindPermanent || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("untrusted certificate: %v", err)
	}
}
