package servicetest_test

import (
	"net/http"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/dbtest"
	"github.com/mailmigrate/mailmigrate/internal/servicetest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestStartWithAPIToken: the service requires the token, and the client
// Start returns sends it.
func TestStartWithAPIToken(t *testing.T) {
	t.Parallel()
	s := servicetest.Start(t, servicetest.Options{APIToken: "0123456789abcdef0123"})
	resp, err := s.Client.ListEndpointsWithResponse(t.Context())
	if err != nil || resp.StatusCode() != http.StatusOK {
		t.Fatalf("the client with the token: %v %v", err, resp.Status())
	}
	raw, err := http.Get(s.API + "/endpoints")
	if err != nil {
		t.Fatal(err)
	}
	raw.Body.Close()
	if raw.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", raw.StatusCode)
	}
}
