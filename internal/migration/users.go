package migration

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Users, their roles and their personal API tokens
// (docs/security.md#users-and-roles). A role applies to every task: see
// the docs for why a user is not limited to some tasks.

// Role is what a user may do.
type Role string

// The roles, each allowed what the one before it is, and more.
const (
	RoleViewer   Role = "viewer"   // reads everything but secrets, changes nothing
	RoleOperator Role = "operator" // tasks, accounts, passes, schedules, with the endpoints that exist
	RoleAdmin    Role = "admin"    // everything: endpoints, users, everyone's tokens
)

// Roles are every Role, the least first.
var Roles = []Role{RoleViewer, RoleOperator, RoleAdmin}

// Covers reports whether r may do what needs the role need.
func (r Role) Covers(need Role) bool {
	have, want := slices.Index(Roles, r), slices.Index(Roles, need)
	return have >= 0 && want >= 0 && have >= want
}

// Principal is who a request comes from: the holder of the token that let
// it in.
type Principal struct {
	// UserID is the user whose token it is; 0 for the service's own
	// tokens (the one made at its first start, or MAILMIGRATE_API_TOKEN),
	// which are an admin's.
	UserID   int64
	UserName string
	Role     Role
	// TokenID and TokenName name a database token; 0 for the token
	// configured.
	TokenID   int64
	TokenName string
}

// Holder names the principal in the audit trail and in refusals:
// "ann (operator), API token 5: laptop".
func (p Principal) Holder() string {
	token := fmt.Sprintf("API token %d: %s", p.TokenID, p.TokenName)
	if p.TokenID == 0 {
		token = p.TokenName
	}
	if p.UserID == 0 {
		return token
	}
	return fmt.Sprintf("%s (%s), %s", p.UserName, p.Role, token)
}

// ForbiddenError refuses a request its principal's role does not cover.
type ForbiddenError struct {
	Need   Role
	Holder string
	Have   Role
}

func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("forbidden: this needs the %s role; %s is %s", e.Need, e.Holder, article(e.Have))
}

// Kind says the request is not the principal's to make.
func (e *ForbiddenError) Kind() ErrorKind { return KindForbidden }

func article(r Role) string {
	if strings.IndexAny(string(r), "aeiou") == 0 {
		return "an " + string(r)
	}
	return "a " + string(r)
}

// Authorize refuses p what needs need.
func (p Principal) Authorize(need Role) error {
	if p.Role.Covers(need) {
		return nil
	}
	return &ForbiddenError{Need: need, Holder: p.Holder(), Have: p.Role}
}

// User is a person who may use the service.
type User struct {
	ID        int64
	Name      string
	Role      Role
	CreatedAt time.Time
}

// UserInput is a new user.
type UserInput struct {
	Name string
	Role Role
}

// APIToken is a token as it is listed: never its secret.
type APIToken struct {
	ID       int64
	Name     string
	UserID   int64 // 0: the service's own
	UserName string
	// ExpiresAt is zero for a token that never expires (the service's own).
	CreatedAt, ExpiresAt time.Time
	RevokedAt            time.Time // zero: not revoked
}

// NewAPIToken is a token just made, with its secret, shown this once.
type NewAPIToken struct {
	APIToken
	Secret string
}

// TokenInput is a personal token to make.
type TokenInput struct {
	Name string
	// Lifetime is how long it lets requests in (DefaultTokenLifetime when
	// zero).
	Lifetime time.Duration
}

// Token lifetimes: personal tokens always expire.
const (
	DefaultTokenLifetime = 90 * 24 * time.Hour
	MaxTokenLifetime     = 366 * 24 * time.Hour
	maxUserNameRunes     = 100
	maxTokenNameRunes    = 100
)

// UserStore keeps users and their tokens.
type UserStore interface {
	UserList(ctx context.Context) ([]User, error)
	// UserCreate stores a user with a first token (ErrUserExists for a
	// name taken).
	UserCreate(ctx context.Context, in UserInput, first TokenInput) (User, NewAPIToken, error)
	// UserDelete deletes a user and its tokens.
	UserDelete(ctx context.Context, id int64) error
	// TokenList lists the tokens of userID, or everyone's when 0.
	TokenList(ctx context.Context, userID int64) ([]APIToken, error)
	TokenCreate(ctx context.Context, userID int64, in TokenInput) (NewAPIToken, error)
	// TokenRevoke revokes a token of userID (of anyone's when 0);
	// ErrNotFound when there is none such.
	TokenRevoke(ctx context.Context, id, userID int64) error
}

// ErrUserExists refuses a second user of a name.
var ErrUserExists = conflict("a user of that name exists")

// ErrServiceTokenHasNoUser refuses personal tokens to the service's own
// token, which belongs to no user.
var ErrServiceTokenHasNoUser = conflict("personal tokens belong to users, and this request's token is the service's own: " +
	"create a user (POST /users), whose first token comes back with it, and use that")

// Users lists the users, by name.
func (s *Service) Users(ctx context.Context) ([]User, error) { return s.store.UserList(ctx) }

// CreateUser adds a user, with a first personal token for them.
func (s *Service) CreateUser(ctx context.Context, in UserInput, first TokenInput) (User, NewAPIToken, error) {
	in.Name = strings.TrimSpace(in.Name)
	if err := checkName("name", in.Name, maxUserNameRunes); err != nil {
		return User{}, NewAPIToken{}, err
	}
	if !slices.Contains(Roles, in.Role) {
		return User{}, NewAPIToken{}, invalid("role", "must be viewer|operator|admin")
	}
	first, err := checkToken(first)
	if err != nil {
		return User{}, NewAPIToken{}, err
	}
	return s.store.UserCreate(ctx, in, first)
}

// DeleteUser deletes a user and every token of theirs.
func (s *Service) DeleteUser(ctx context.Context, id int64) error { return s.store.UserDelete(ctx, id) }

// Tokens lists p's own tokens; an admin's list holds everyone's.
func (s *Service) Tokens(ctx context.Context, p Principal) ([]APIToken, error) {
	if p.Role == RoleAdmin {
		return s.store.TokenList(ctx, 0)
	}
	return s.store.TokenList(ctx, p.UserID)
}

// CreateToken makes a personal token for p.
func (s *Service) CreateToken(ctx context.Context, p Principal, in TokenInput) (NewAPIToken, error) {
	if p.UserID == 0 {
		return NewAPIToken{}, ErrServiceTokenHasNoUser
	}
	in, err := checkToken(in)
	if err != nil {
		return NewAPIToken{}, err
	}
	return s.store.TokenCreate(ctx, p.UserID, in)
}

// RevokeToken revokes one of p's tokens; an admin may revoke anyone's.
func (s *Service) RevokeToken(ctx context.Context, p Principal, id int64) error {
	owner := p.UserID
	if p.Role == RoleAdmin {
		owner = 0
	}
	return s.store.TokenRevoke(ctx, id, owner)
}

func checkToken(in TokenInput) (TokenInput, error) {
	in.Name = strings.TrimSpace(in.Name)
	if err := checkName("token_name", in.Name, maxTokenNameRunes); err != nil {
		return in, err
	}
	switch {
	case in.Lifetime == 0:
		in.Lifetime = DefaultTokenLifetime
	case in.Lifetime < 0 || in.Lifetime > MaxTokenLifetime:
		return in, invalid("expires_in_days", "must be 1 to %d", int(MaxTokenLifetime/(24*time.Hour)))
	}
	return in, nil
}

// checkName checks a name a person gives: not empty, at most most
// characters, and plain text (checkText; its length is counted above, in
// characters).
func checkName(field, name string, most int) error {
	switch {
	case name == "":
		return invalid(field, "must not be empty")
	case utf8.RuneCountInString(name) > most:
		return invalid(field, "must be at most %d characters", most)
	}
	return checkText(field, name, len(name))
}

// Signing in to the console with a name and a password
// (docs/security.md#signing-in).

// Session is what a sign-in opens: the secret its cookie carries and the
// CSRF token its state-changing requests carry, each seen once.
type Session struct {
	Cookie, CSRF string
	ExpiresAt    time.Time
	Principal    Principal
}

// SignInPolicy bounds sign-ins: after Failures wrong passwords in a row a
// user is locked out for Lockout; a session lasts Lifetime.
type SignInPolicy struct {
	Failures int
	Lockout  time.Duration
	Lifetime time.Duration
}

// DefaultSignInPolicy locks a user out for 15 minutes after 5 wrong
// passwords in a row, and keeps a session 12 hours.
var DefaultSignInPolicy = SignInPolicy{Failures: 5, Lockout: 15 * time.Minute, Lifetime: 12 * time.Hour}

// MinPasswordRunes is the shortest password a user may have.
const MinPasswordRunes = 12

// SignInStore keeps users' passwords and the sessions they open.
type SignInStore interface {
	// UserPasswordSet stores a digest of password as user id's
	// (ErrNotFound without such a user).
	UserPasswordSet(ctx context.Context, id int64, password string) error
	// SignIn checks name's password and opens a session: ErrSignInRefused
	// for a wrong name or password (or a user without one), a
	// *SignInLockedError while locked out.
	SignIn(ctx context.Context, name, password string, policy SignInPolicy) (Session, error)
	// SignOut ends the session of cookie, if any.
	SignOut(ctx context.Context, cookie string) error
}

// ErrSignInRefused refuses a sign-in without saying which of the name or
// the password was wrong.
var ErrSignInRefused = unauthenticated("name or password is wrong")

// SignInLockedError refuses a sign-in as a user locked out after wrong
// passwords.
type SignInLockedError struct{ Until time.Time }

func (e *SignInLockedError) Error() string {
	return fmt.Sprintf("too many wrong passwords: signing in as this user is locked until %s", e.Until.UTC().Format("15:04 MST"))
}

// Kind says the sign-in is refused.
func (e *SignInLockedError) Kind() ErrorKind { return KindUnauthenticated }

// SetPassword gives user id a password to sign in to the console with;
// an admin may set anyone's, others their own alone (another's answers
// ErrNotFound, as for tokens).
func (s *Service) SetPassword(ctx context.Context, p Principal, id int64, password string) error {
	if p.Role != RoleAdmin && p.UserID != id {
		return ErrNotFound
	}
	switch {
	case utf8.RuneCountInString(password) < MinPasswordRunes:
		return invalid("password", "must have at least %d characters", MinPasswordRunes)
	case len(password) > MaxPasswordBytes:
		return invalid("password", "must be at most %d bytes", MaxPasswordBytes)
	}
	return s.store.UserPasswordSet(ctx, id, password)
}

// SignIn opens a console session as name.
func (s *Service) SignIn(ctx context.Context, name, password string) (Session, error) {
	name = strings.TrimSpace(name)
	if name == "" || password == "" || len(password) > MaxPasswordBytes {
		return Session{}, ErrSignInRefused
	}
	return s.store.SignIn(ctx, name, password, DefaultSignInPolicy)
}

// SignOut ends the session of cookie.
func (s *Service) SignOut(ctx context.Context, cookie string) error {
	return s.store.SignOut(ctx, cookie)
}
