package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mailmigrate/mailmigrate/internal/httpapi"
	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// vettingStore stands in for the database behind the fuzzed handlers: it
// keeps nothing and records any value that reaches it although the domain
// should have refused it. Storage itself is tested on PostgreSQL; a fuzz
// worker is a process of its own and cannot start a cluster each. Any
// other store call panics on the nil interface and shows as a 500.
type vettingStore struct {
	migration.Store
	mu        sync.Mutex
	violation string
}

func (s *vettingStore) vet(problem string) {
	if problem == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.violation = problem
}

func (s *vettingStore) takeViolation() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.violation
	s.violation = ""
	return v
}

func (s *vettingStore) EndpointCreate(_ context.Context, e migration.Endpoint) (int64, error) {
	s.vet(endpointProblem(e))
	return 1, nil
}

func (s *vettingStore) EndpointUpdate(_ context.Context, e migration.Endpoint) error {
	s.vet(endpointProblem(e))
	return nil
}

func (s *vettingStore) TaskCreate(_ context.Context, spec migration.TaskSpec) (int64, error) {
	s.vet(taskProblem(spec))
	return 1, nil
}

func (s *vettingStore) TaskUpdate(_ context.Context, _ int64, spec migration.TaskSpec) error {
	s.vet(taskProblem(spec))
	return nil
}

// TaskSecretNeeds: the fuzzed task's accounts log in with passwords on
// both sides, so that a created account without one is a violation.
func (s *vettingStore) TaskSecretNeeds(context.Context, int64) (migration.SecretNeeds, error) {
	return migration.EveryPassword, nil
}

func (s *vettingStore) AccountsAdd(_ context.Context, _ int64, accounts []migration.AccountInput) ([]int64, error) {
	ids := make([]int64, len(accounts))
	for i, a := range accounts {
		s.vet(accountProblem(a, true))
		ids[i] = int64(i + 1)
	}
	return ids, nil
}

func (s *vettingStore) AccountUpdate(_ context.Context, _, _ int64, a migration.AccountInput) error {
	s.vet(accountProblem(a, false))
	return nil
}

// textProblem says what is wrong with a stored text field, if anything.
func textProblem(field, v string, maxBytes int, controlsAllowed bool) string {
	switch {
	case len(v) > maxBytes:
		return fmt.Sprintf("%s of %d bytes stored", field, len(v))
	case !utf8.ValidString(v):
		return field + " stored as invalid UTF-8"
	case !controlsAllowed && strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return field + " stored with a control character"
	}
	return ""
}

func endpointProblem(e migration.Endpoint) string {
	if e.Port < 1 || e.Port > 65535 {
		return fmt.Sprintf("port %d stored", e.Port)
	}
	if e.TLSMode != migration.TLSModeSSL && e.TLSMode != migration.TLSModeSTARTTLS && e.TLSMode != migration.TLSModePlain {
		return fmt.Sprintf("tls_mode %q stored", e.TLSMode)
	}
	problem := textProblem("role_label", e.RoleLabel, 1024, true) + textProblem("host", e.Host, 253, false)
	switch a := e.Auth; a.Method {
	case "", migration.AuthPassword:
		if a.MasterLogin != "" || a.MasterPassword != "" {
			problem += "master settings stored without the master method"
		}
	case migration.AuthMaster:
		problem += textProblem("master_login", a.MasterLogin, 1024, false)
		if a.MasterLogin == "" || (a.MasterForm != migration.MasterAuthzid && a.MasterForm != migration.MasterSeparator) ||
			len(a.MasterPassword) > 1024 || strings.ContainsAny(string(a.MasterPassword), "\x00\r\n") {
			problem += fmt.Sprintf("master login %q, form %q or its password stored", a.MasterLogin, a.MasterForm)
		}
	case migration.AuthOAuth2:
		o := a.OAuth2
		problem += textProblem("client_id", o.ClientID, 1024, false) + textProblem("scope", o.Scope, 1024, false) + textProblem("token_url", o.TokenURL, 2048, false)
		if o.ClientID == "" || o.TokenURL == "" || (o.Grant != migration.GrantRefreshToken && o.Grant != migration.GrantClientCredentials) ||
			(o.Mechanism != migration.MechanismXOAuth2 && o.Mechanism != migration.MechanismOAuthBearer) ||
			len(o.ClientSecret) > 4096 || strings.ContainsAny(string(o.ClientSecret), "\x00\r\n") || a.MasterLogin != "" {
			problem += fmt.Sprintf("oauth2 settings %+v stored", o)
		}
	default:
		problem += fmt.Sprintf("auth method %q stored", a.Method)
	}
	return problem
}

func taskProblem(spec migration.TaskSpec) string {
	o := spec.Options
	problem := textProblem("name", spec.Name, 1024, true)
	for _, re := range append(append([]*regexp.Regexp{}, o.IncludeFolders...), o.ExcludeFolders...) {
		problem += textProblem("folder pattern", re.String(), 1024, true)
	}
	for from, to := range o.FolderMap {
		problem += textProblem("folder_map source", from, 1024, false) + textProblem("folder_map destination", to, 1024, false)
	}
	if o.ParallelAccounts < 1 || o.ParallelAccounts > migration.MaxParallelAccounts || o.MaxMessageBytes < 0 ||
		!o.Since.Equal(o.Since.Truncate(24*time.Hour)) || o.Since.Location() != time.UTC {
		problem += fmt.Sprintf("options %+v stored", o)
	}
	return problem
}

func accountProblem(a migration.AccountInput, created bool) string {
	problem := textProblem("source_login", a.SourceLogin, 1024, false) + textProblem("destination_login", a.DestinationLogin, 1024, false)
	if a.SourceLogin == "" || a.DestinationLogin == "" ||
		(created && (a.SourcePassword == "" || (a.DestinationPassword == "") != a.DestinationPasswordSameAsSource)) {
		problem += "an empty login or password stored"
	}
	for _, p := range []migration.Password{a.SourcePassword, a.DestinationPassword} {
		if len(p) > 1024 || strings.ContainsAny(string(p), "\x00\r\n") {
			problem += "a password of over 1024 bytes or with NUL, CR or LF stored"
		}
	}
	return problem
}

// fuzzJSONBody sends body to the collection (POST) or to one item (PUT) of
// a resource through the real router, and checks that the answer is a
// success or a plain-text 4xx, never a 500 or a panic, and that nothing
// the domain must refuse reaches the store.
func fuzzJSONBody(f *testing.F, collection, item string, seeds []string) {
	for _, seed := range seeds {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	send := newFuzzSender(collection, item)
	f.Fuzz(func(t *testing.T, body []byte, put bool) { send(t, body, put) })
}

// newFuzzSender returns the request-and-check step of the JSON fuzz
// targets, on one handler for the whole run.
func newFuzzSender(collection, item string) func(t *testing.T, body []byte, put bool) {
	store := &vettingStore{}
	// httptest.NewRequest names example.com in Host.
	handler := httpapi.NewHandler(httpapi.Options{Service: migration.NewService(store), AllowedHosts: []string{"example.com"}})
	return func(t *testing.T, body []byte, put bool) {
		t.Helper()
		method, path := http.MethodPost, collection
		if put {
			method, path = http.MethodPut, item
		}
		req := httptest.NewRequest(method, httpapi.BasePath+path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusCreated, http.StatusNoContent:
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			if ct := rec.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" || rec.Body.Len() == 0 || rec.Body.Len() > 4096 {
				t.Fatalf("%s %s %q: %d %q with %d bytes, want a short plain-text error", method, path, body, rec.Code, ct, rec.Body.Len())
			}
		default:
			t.Fatalf("%s %s %q: %d %q", method, path, body, rec.Code, rec.Body)
		}
		if v := store.takeViolation(); v != "" {
			t.Fatalf("%s %s %q answered %d, and the store got: %s", method, path, body, rec.Code, v)
		}
	}
}

// mustJSON encodes v; the field-wise fuzz targets build well-formed
// bodies from fuzzed values, so that the fuzzer explores the validation
// rather than the JSON syntax.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func FuzzEndpointJSON(f *testing.F) {
	fuzzJSONBody(f, "/endpoints", "/endpoints/1", []string{
		`{"role_label":"old","host":"imap.old.example","port":993,"tls_mode":"ssl"}`,
		`{"tls_mode":"starttls","port":0,"tls_skip_verify":true}`,
		`{"tls_mode":"plain","port":65536}`, `{"tls_mode":"tls"}`, `{"port":"993","tls_mode":"ssl"}`,
		`{"tls_mode":"ssl","host":"\u0000\ud800"}`, `{"tls_mode":"ssl"} {}`, `null`, `[]`, ``, `{"tls_mode":"ssl","port":1e3}`,
		`{"tls_mode":"ssl","port":9223372036854775808}`, `{"tls_mode":"ssl","role_label":"` + strings.Repeat("é", 600) + `"}`,
		`{"tls_mode":"ssl","auth":{"method":"master","master_login":"admin","master_password":"pw","master_form":"separator"}}`,
		`{"tls_mode":"ssl","auth":{"method":"master","master_login":"a\r\nb","master_password":"p\u0000w"}}`,
		`{"tls_mode":"ssl","auth":{"method":"password","master_login":"admin"}}`, `{"tls_mode":"ssl","auth":{}}`, `{"tls_mode":"ssl","auth":null}`,
		`{"tls_mode":"ssl","auth":{"method":"oauth2","oauth2":{"provider":"microsoft365","tenant":"contoso.com","grant":"client_credentials","client_id":"a","client_secret":"s"}}}`,
		`{"tls_mode":"ssl","auth":{"method":"oauth2","oauth2":{"token_url":"http://idp.example/t","client_id":"a\n"}}}`,
		`{"tls_mode":"ssl","auth":{"method":"oauth2","oauth2":{"provider":"google","client_id":"a","mechanism":"oauthbearer"}}}`,
		`{"tls_mode":"ssl","auth":{"method":"oauth2"}}`,
	})
}

func FuzzTaskJSON(f *testing.F) {
	fuzzJSONBody(f, "/tasks", "/tasks/1", []string{
		`{"name":"move","source_endpoint_id":1,"destination_endpoint_id":2}`,
		`{"name":"m","source_endpoint_id":1,"destination_endpoint_id":2,"options":{"include_folders":["^INBOX"],"exclude_folders":["(?i)trash"],` +
			`"folder_map":{"Sent Items":"Sent"},"max_message_bytes":1000,"since":"2024-01-31","parallel_accounts":8}}`,
		`{"source_endpoint_id":1,"destination_endpoint_id":2,"options":{"include_folders":["("]}}`,
		`{"source_endpoint_id":1,"destination_endpoint_id":2,"options":{"folder_map":{"a":"b\r\n"}}}`,
		`{"source_endpoint_id":1,"destination_endpoint_id":2,"options":{"since":"2024-02-30"}}`,
		`{"source_endpoint_id":1,"destination_endpoint_id":2,"options":{"parallel_accounts":-1,"max_message_bytes":-5}}`,
		`{"source_endpoint_id":-1,"destination_endpoint_id":0}`, `{"options":null}`, `{"options":[]}`,
	})
}

func FuzzAccountJSON(f *testing.F) {
	fuzzJSONBody(f, "/tasks/1/accounts", "/tasks/1/accounts/1", []string{
		`{"source_login":"alice@old.example","source_password":"pw"}`,
		`{"source_login":" a@x ","source_password":"p","destination_login":"b@y","destination_password":"q"}`,
		`{"source_login":"a\nb","source_password":"pw"}`, `{"source_login":"a@x","source_password":"p\u0000w"}`,
		`{"source_login":"","source_password":""}`, `{"source_login":"a@x"}`, `{"source_login":1}`,
		`{"source_login":"a@x","source_refresh_token":"rt"}`, `{"source_login":"a@x","source_password":"p","source_refresh_token":"rt"}`,
	})
}

func FuzzEndpointFields(f *testing.F) {
	f.Add("old", "imap.old.example", 993, "ssl", false)
	f.Add("", "", 0, "starttls", true)
	f.Add("\x00", "h\r\nX: y", -1, "plain", false)
	f.Add(strings.Repeat("é", 513), strings.Repeat("h", 254), 65536, "SSL", true)
	send := newFuzzSender("/endpoints", "/endpoints/1")
	f.Fuzz(func(t *testing.T, label, host string, port int, mode string, put bool) {
		send(t, mustJSON(t, map[string]any{"role_label": label, "host": host, "port": port, "tls_mode": mode}), put)
	})
}

func FuzzTaskFields(f *testing.F) {
	f.Add("move", "^INBOX", "(?i)trash", "Sent Items", "Sent", "2024-01-31", 8, int64(1000), false)
	f.Add("", "(", "[", "", "", "2024-02-30", 0, int64(-1), true)
	f.Add(strings.Repeat("n", 1025), "a{1001}", "\\p{Greek}", "x\n", "\x7f", "31.01.2024", 65, int64(0), false)
	send := newFuzzSender("/tasks", "/tasks/1")
	f.Fuzz(func(t *testing.T, name, include, exclude, from, to, since string, parallel int, maxBytes int64, put bool) {
		send(t, mustJSON(t, map[string]any{
			"name": name, "source_endpoint_id": 1, "destination_endpoint_id": 2,
			"options": map[string]any{
				"include_folders": []string{include}, "exclude_folders": []string{exclude},
				"folder_map": map[string]string{from: to}, "since": since,
				"parallel_accounts": parallel, "max_message_bytes": maxBytes,
			},
		}), put)
	})
}

func FuzzAccountFields(f *testing.F) {
	f.Add("alice@old.example", "pw", "", "", false)
	f.Add(" a@x ", "p", "b@y", "q", true)
	f.Add("a\nb", "p\x00w", "\t", "\r", false)
	f.Add("", "", strings.Repeat("l", 1025), strings.Repeat("p", 1025), true)
	send := newFuzzSender("/tasks/1/accounts", "/tasks/1/accounts/1")
	f.Fuzz(func(t *testing.T, sourceLogin, sourcePassword, destinationLogin, destinationPassword string, put bool) {
		send(t, mustJSON(t, map[string]string{
			"source_login": sourceLogin, "source_password": sourcePassword,
			"destination_login": destinationLogin, "destination_password": destinationPassword,
		}), put)
	})
}
