package migration

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
)

// AccountOrder is a key a task's accounts can be listed in.
type AccountOrder string

// The orders of a listing; ties go by id.
const (
	OrderByID       AccountOrder = "id"
	OrderByLogin    AccountOrder = "login"    // the source login, in any case
	OrderByState    AccountOrder = "state"    // AccountStatesByAttention, then login
	OrderByProgress AccountOrder = "progress" // the share of messages done
	OrderByUpdated  AccountOrder = "updated"  // the last change
)

// AccountOrders are every AccountOrder, as the API's AccountSort lists
// them (each followed by its reverse, "-" and the name).
var AccountOrders = []AccountOrder{OrderByID, OrderByLogin, OrderByState, OrderByProgress, OrderByUpdated}

// AccountStatesByAttention is OrderByState: what is under way first, then
// what needs a person, then the rest.
var AccountStatesByAttention = []AccountState{AccountRunning, AccountTesting, AccountQueued,
	AccountFailed, AccountCompletedWithErrors, AccountCanceled, AccountIdle, AccountCompleted}

// AccountSort is an order and its direction.
type AccountSort struct {
	By         AccountOrder
	Descending bool
}

// ParseAccountSort reads a sort as the API writes it: "login", or
// "-login" for the reverse; "" is by id.
func ParseAccountSort(text string) (AccountSort, error) {
	if text == "" {
		return AccountSort{By: OrderByID}, nil
	}
	name, descending := strings.CutPrefix(text, "-")
	if !slices.Contains(AccountOrders, AccountOrder(name)) {
		return AccountSort{}, invalid("sort", "must be one of id, login, state, progress, updated, each with - before it for the reverse")
	}
	return AccountSort{By: AccountOrder(name), Descending: descending}, nil
}

func (s AccountSort) String() string {
	if s.Descending {
		return "-" + string(s.By)
	}
	return string(s.By)
}

// AccountCursor is a position in a listing: the sort key of the last
// account of a page, as the store computes it, and its id.
type AccountCursor struct {
	Sort AccountSort
	Key  string
	ID   int64
}

// cursorText is the JSON inside a cursor's text.
type cursorText struct {
	Sort string `json:"s"`
	Key  string `json:"k"`
	ID   int64  `json:"i"`
}

// String is the cursor as the API hands it out: opaque, URL-safe.
func (c AccountCursor) String() string {
	data, _ := json.Marshal(cursorText{Sort: c.Sort.String(), Key: c.Key, ID: c.ID}) // cannot fail
	return base64.RawURLEncoding.EncodeToString(data)
}

// maxCursorBytes bounds a cursor's text: a key is at most a login's
// length in bytes, lower-cased, and a little more.
const maxCursorBytes = 4096

// ParseAccountCursor reads a cursor that String wrote.
func ParseAccountCursor(text string) (AccountCursor, error) {
	bad := invalid("cursor", "is not one this service handed out")
	if len(text) > maxCursorBytes {
		return AccountCursor{}, bad
	}
	data, err := base64.RawURLEncoding.DecodeString(text)
	if err != nil {
		return AccountCursor{}, bad
	}
	var c cursorText
	if err := json.Unmarshal(data, &c); err != nil || c.ID <= 0 {
		return AccountCursor{}, bad
	}
	sort, err := ParseAccountSort(c.Sort)
	if err != nil {
		return AccountCursor{}, bad
	}
	return AccountCursor{Sort: sort, Key: c.Key, ID: c.ID}, nil
}

// LoginTestFilter selects accounts by their last login test.
type LoginTestFilter string

// The login test filters; "" selects any account.
const (
	LoginTestPassed   LoginTestFilter = "passed"   // both sides worked
	LoginTestFailed   LoginTestFilter = "failed"   // a side failed
	LoginTestUntested LoginTestFilter = "untested" // no side failed, and a side is not tested
)

// LoginTestFilters are every LoginTestFilter but "", as the API lists them.
var LoginTestFilters = []LoginTestFilter{LoginTestPassed, LoginTestFailed, LoginTestUntested}

// maxSelectedIDs bounds the ids a selection names: a page's worth of
// ticked rows many times over, far below what a request body may carry.
const maxSelectedIDs = 10_000

// AccountFilter selects some of a task's accounts: those matching every
// criterion given. The zero value selects all.
type AccountFilter struct {
	IDs       []int64         // only these; none: any
	States    []AccountState  // only accounts in one of these; none: any
	Search    string          // only accounts with this in either login, in any case; "": any
	LoginTest LoginTestFilter // only accounts whose last login test says so; "": any
}

// IsZero reports whether f selects every account.
func (f AccountFilter) IsZero() bool {
	return len(f.IDs) == 0 && len(f.States) == 0 && f.Search == "" && f.LoginTest == ""
}

func (f *AccountFilter) normalize() error {
	if len(f.IDs) > maxSelectedIDs {
		return invalid("ids", "must name at most %d accounts", maxSelectedIDs)
	}
	for _, id := range f.IDs {
		if id <= 0 {
			return invalid("ids", "must be account ids, not %d", id)
		}
	}
	for _, s := range f.States {
		if !slices.Contains(AccountStates, s) {
			return invalid("state", "%.40q is not an account state", s)
		}
	}
	if err := checkText("q", f.Search, MaxLoginBytes); err != nil {
		return err
	}
	if f.LoginTest != "" && !slices.Contains(LoginTestFilters, f.LoginTest) {
		return invalid("login_test", "must be passed, failed or untested")
	}
	return nil
}

// AccountQuery selects, orders and pages a task's accounts.
type AccountQuery struct {
	AccountFilter
	Sort  AccountSort
	After *AccountCursor // start after this position; nil: at the start
	Limit int            // at most this many; 0: all
}

// normalize checks q and fills in the default order.
func (q *AccountQuery) normalize() error {
	if err := q.AccountFilter.normalize(); err != nil {
		return err
	}
	if q.Sort.By == "" {
		q.Sort.By = OrderByID
	}
	if q.After != nil && q.After.Sort != q.Sort {
		return invalid("cursor", "belongs to sort %s, not %s", q.After.Sort, q.Sort)
	}
	if q.Limit < 0 {
		return invalid("limit", "must be 1 or more")
	}
	return nil
}

// AccountsPage is one page of a listing.
type AccountsPage struct {
	Accounts []Account
	Next     *AccountCursor // where the next page starts; nil after the last
	Total    int64          // the accounts the filters select, on all pages
}
