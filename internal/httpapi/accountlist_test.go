package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// accountPage is one answer of GET /tasks/{id}/accounts.
type accountPage struct {
	logins []string // source logins, in the order given
	next   string   // the Link rel="next" path below the API base, or ""
	total  int64    // X-Total-Count
}

var nextLinkRE = regexp.MustCompile(`^<([^>]+)>; rel="next"$`)

// listPage gets path (below the API base) and reads the page.
func (s *testService) listPage(t *testing.T, path string) accountPage {
	t.Helper()
	got := s.do(t, "GET", path, "")
	if got.status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, got.status, got.body)
	}
	var accounts []api.Account
	if err := json.Unmarshal([]byte(got.body), &accounts); err != nil {
		t.Fatal(err)
	}
	page := accountPage{}
	for _, a := range accounts {
		page.logins = append(page.logins, a.SourceLogin)
	}
	total, err := strconv.ParseInt(got.header.Get("X-Total-Count"), 10, 64)
	if err != nil {
		t.Fatalf("GET %s: X-Total-Count %q", path, got.header.Get("X-Total-Count"))
	}
	page.total = total
	if link := got.header.Get("Link"); link != "" {
		m := nextLinkRE.FindStringSubmatch(link)
		if m == nil || !strings.HasPrefix(m[1], "/api/v1/") {
			t.Fatalf("GET %s: Link %q", path, link)
		}
		page.next = strings.TrimPrefix(m[1], "/api/v1")
	}
	return page
}

// listAll follows the Link headers from path and returns every login.
func (s *testService) listAll(t *testing.T, path string) []string {
	t.Helper()
	var logins []string
	for pages := 0; path != ""; pages++ {
		if pages > 100 {
			t.Fatal("more than 100 pages: the cursor does not advance")
		}
		page := s.listPage(t, path)
		logins = append(logins, page.logins...)
		path = page.next
	}
	return logins
}

// seedListing imports accounts and gives them states and progress: the
// listing's filters and orders then have something to tell apart.
func seedListing(t *testing.T, s *testService) int64 {
	t.Helper()
	taskID, _, _ := s.newTask(t)
	s.importCSV(t, taskID, strings.Join([]string{
		"carol@old,pw", "Alice@old,pw", "bob@old,pw,robert@new,pw", "dave@old,pw", "Eve@old,pw",
		"frank@old,pw", "grace@old,pw", "heidi@old,pw", "ivan@old,pw", "judy@old,pw",
	}, "\n"))
	_, err := s.pool.Exec(context.Background(), `
		UPDATE accounts SET
		  state = CASE source_login
		    WHEN 'carol@old' THEN 'running' WHEN 'dave@old' THEN 'failed' WHEN 'Eve@old' THEN 'completed'
		    WHEN 'frank@old' THEN 'queued' WHEN 'grace@old' THEN 'failed' WHEN 'heidi@old' THEN 'canceled'
		    WHEN 'ivan@old' THEN 'completed_with_errors' ELSE 'idle' END,
		  messages_total = CASE source_login WHEN 'carol@old' THEN 100 WHEN 'dave@old' THEN 10 WHEN 'heidi@old' THEN 4 ELSE 0 END,
		  messages_copied = CASE source_login WHEN 'carol@old' THEN 30 WHEN 'dave@old' THEN 9 WHEN 'heidi@old' THEN 1 ELSE 0 END,
		  updated_at = now() - CASE source_login WHEN 'judy@old' THEN interval '1 hour' WHEN 'Alice@old' THEN interval '2 hours' ELSE interval '0' END
		WHERE task_id = $1`, taskID)
	if err != nil {
		t.Fatal(err)
	}
	return taskID
}

func TestListAccountsFiltersAndSorts(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID := seedListing(t, s)
	base := fmt.Sprintf("/tasks/%d/accounts", taskID)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"carol@old", "Alice@old", "bob@old", "dave@old", "Eve@old", "frank@old", "grace@old", "heidi@old", "ivan@old", "judy@old"}},
		{"?state=failed,canceled", []string{"dave@old", "grace@old", "heidi@old"}},
		{"?state=running", []string{"carol@old"}},
		{"?q=ALICE", []string{"Alice@old"}},
		{"?q=robert", []string{"bob@old"}}, // the destination login
		{"?q=%40old&state=idle", []string{"Alice@old", "bob@old", "judy@old"}},
		{"?q=nobody", nil},
		{"?sort=login", []string{"Alice@old", "bob@old", "carol@old", "dave@old", "Eve@old", "frank@old", "grace@old", "heidi@old", "ivan@old", "judy@old"}},
		{"?sort=-login&state=failed", []string{"grace@old", "dave@old"}},
		// Under way, then what needs a person, then the rest.
		{"?sort=state", []string{"carol@old", "frank@old", "dave@old", "grace@old", "ivan@old", "heidi@old", "Alice@old", "bob@old", "judy@old", "Eve@old"}},
		{"?sort=-progress&state=running,failed,canceled,completed", []string{"Eve@old", "dave@old", "carol@old", "heidi@old", "grace@old"}},
		{"?sort=updated&q=judy", []string{"judy@old"}},
		{"?sort=updated&state=idle", []string{"Alice@old", "judy@old", "bob@old"}},
	} {
		page := s.listPage(t, base+tc.query)
		if !slices.Equal(page.logins, tc.want) {
			t.Errorf("%s: %q, want %q", tc.query, page.logins, tc.want)
		}
		if page.total != int64(len(tc.want)) || page.next != "" {
			t.Errorf("%s: total %d and next %q, want %d and none", tc.query, page.total, page.next, len(tc.want))
		}
	}
}

// TestListAccountsPagesEveryOrder: following the next links gives every
// account once, in the order of one whole listing, in either direction.
func TestListAccountsPagesEveryOrder(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID := seedListing(t, s)
	base := fmt.Sprintf("/tasks/%d/accounts", taskID)
	for _, sort := range []string{"id", "login", "state", "progress", "updated"} {
		for _, order := range []string{sort, "-" + sort} {
			whole := s.listPage(t, base+"?sort="+order).logins
			for _, limit := range []int{1, 3, 10} {
				first := s.listPage(t, fmt.Sprintf("%s?sort=%s&limit=%d", base, order, limit))
				if first.total != 10 || len(first.logins) != limit || (first.next == "") != (limit == 10) {
					t.Errorf("%s limit %d: first page %+v", order, limit, first)
				}
				if paged := s.listAll(t, fmt.Sprintf("%s?sort=%s&limit=%d", base, order, limit)); !slices.Equal(paged, whole) {
					t.Errorf("%s in pages of %d: %q, want %q", order, limit, paged, whole)
				}
			}
		}
	}
	// The filters go along to the next page.
	if got := s.listAll(t, base+"?state=failed,canceled&q=o&sort=-login&limit=1"); !slices.Equal(got, []string{"heidi@old", "grace@old", "dave@old"}) {
		t.Errorf("filtered pages: %q", got)
	}
}

// TestListAccountsCursorHoldsUnderInserts: accounts added while a client
// pages neither repeat an account nor skip one that was there.
func TestListAccountsCursorHoldsUnderInserts(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID := seedListing(t, s)
	base := fmt.Sprintf("/tasks/%d/accounts", taskID)
	first := s.listPage(t, base+"?sort=login&limit=4")
	// One before the first page's end, one after it.
	s.importCSV(t, taskID, "aaron@old,pw\nzoe@old,pw\n")
	rest := s.listAll(t, first.next)
	want := []string{"Eve@old", "frank@old", "grace@old", "heidi@old", "ivan@old", "judy@old", "zoe@old"}
	if !slices.Equal(rest, want) {
		t.Errorf("after %q and two inserts: %q, want %q", first.logins, rest, want)
	}
}

func TestListAccountsRefusals(t *testing.T) {
	t.Parallel()
	s := newTestService(t)
	taskID := seedListing(t, s)
	base := fmt.Sprintf("/tasks/%d/accounts", taskID)
	next, err := url.Parse(s.listPage(t, base+"?sort=login&limit=2").next)
	cursor := next.Query().Get("cursor")
	if err != nil || cursor == "" {
		t.Fatalf("no cursor in the next link %v: %v", next, err)
	}
	for query, want := range map[string]string{
		"?sort=size":                        "sort must be one of id, login, state, progress, updated, each with - before it for the reverse",
		"?state=done":                       `state "done" is not an account state`,
		"?q=a%00b":                          "q must not contain control characters",
		"?q=" + strings.Repeat("a", 1025):   "q must be at most 1024 bytes",
		"?cursor=abc":                       "cursor is not one this service handed out",
		"?cursor=" + cursor + "&sort=state": "cursor belongs to sort login, not state",
		"?after=1&sort=login":               "after pages in id order only, and not with cursor",
		"?after=-1":                         "after must be 0 or more",
		"?limit=0":                          "limit must be 1 or more",
	} {
		wantText(t, s.do(t, "GET", base+query, ""), http.StatusBadRequest, want)
	}
	// The cursor alone carries its order.
	if got := s.listPage(t, base+"?limit=2&cursor="+cursor).logins; !slices.Equal(got, []string{"carol@old", "dave@old"}) {
		t.Errorf("cursor without sort: %q", got)
	}
	wantText(t, s.do(t, "GET", "/tasks/999999/accounts?state=failed", ""), http.StatusNotFound, "not found")
}
