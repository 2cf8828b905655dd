package cli

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

func userCommands() []command {
	return []command{
		{"list", "", "List the users and their roles (admins only)", userList},
		{"add", "NAME", "Add a user with a role; prints their first token, once, to hand over", userAdd},
		{"delete", "ID", "Delete a user and every token of theirs", userDelete},
		{"password", "ID", "Set the password a user signs in to the console with (yours, or anyone's as an admin)", userPassword},
	}
}

// userPasswordEnv may hold the password of users password, out of ps and
// the shell's history.
const userPasswordEnv = "MAILMIGRATE_USER_PASSWORD"

func tokenCommands() []command {
	return []command{
		{"whoami", "", "Say whose token this is, and its role", tokenWhoami},
		{"list", "", "List your tokens (an admin's list holds everyone's), never their secrets", tokenList},
		{"create", "NAME", "Make a personal token with your role; prints it, once", tokenCreate},
		{"revoke", "ID", "Revoke one of your tokens (an admin may revoke anyone's)", tokenRevoke},
	}
}

func userList(ctx context.Context, s *session, args []string) error {
	if _, err := s.parse(args, 0); err != nil {
		return err
	}
	resp, err := s.client.ListUsersWithResponse(ctx)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	users := *resp.JSON200
	return s.printOutput(users, func() error {
		rows := make([][]string, len(users))
		for i, u := range users {
			rows[i] = []string{itoa(u.Id), u.Name, string(u.Role), u.CreatedAt.Local().Format(time.DateTime)}
		}
		return s.printTable([]string{"ID", "NAME", "ROLE", "CREATED"}, rows)
	})
}

func userAdd(ctx context.Context, s *session, args []string) error {
	role := s.flags.String("role", "", "viewer, operator or admin (required)")
	days := s.flags.Int("expires-in-days", 90, "the first token's lifetime")
	rest, err := s.parse(args, 1)
	if err != nil {
		return err
	}
	if *role == "" {
		return s.usageErrorf("--role is required: viewer, operator or admin")
	}
	resp, err := s.client.CreateUserWithResponse(ctx, api.UserInput{Name: rest[0], Role: api.Role(*role), ExpiresInDays: days})
	if err := expect(resp, err, http.StatusCreated); err != nil {
		return err
	}
	created := resp.JSON201
	return s.printOutput(created, func() error {
		return s.printNewToken(fmt.Sprintf("user %d, %s (%s)", created.User.Id, created.User.Name, created.User.Role), created.Token)
	})
}

func userDelete(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.DeleteUserWithResponse(ctx, id)
	return expect(resp, err, http.StatusNoContent)
}

func userPassword(ctx context.Context, s *session, args []string) error {
	file := s.flags.String("password-file", "", "read the password from this file, or from stdin with - (else "+userPasswordEnv+")")
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	password, err := s.readSecret(*file, userPasswordEnv)
	if err != nil {
		return err
	}
	if password == "" {
		return s.usageErrorf("give the password in %s, or with --password-file", userPasswordEnv)
	}
	resp, err := s.client.SetUserPasswordWithResponse(ctx, id, api.SetUserPasswordJSONRequestBody{Password: password})
	return expect(resp, err, http.StatusNoContent)
}

func tokenWhoami(ctx context.Context, s *session, args []string) error {
	if _, err := s.parse(args, 0); err != nil {
		return err
	}
	resp, err := s.client.GetMeWithResponse(ctx)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	me := resp.JSON200
	return s.printOutput(me, func() error {
		return s.printFields([][2]string{{"who", me.Name}, {"role", string(me.Role)}})
	})
}

func tokenList(ctx context.Context, s *session, args []string) error {
	if _, err := s.parse(args, 0); err != nil {
		return err
	}
	resp, err := s.client.ListTokensWithResponse(ctx)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	tokens := *resp.JSON200
	return s.printOutput(tokens, func() error {
		rows := make([][]string, len(tokens))
		for i, t := range tokens {
			user := t.UserName
			if t.UserId == 0 {
				user = "(the service's own)"
			}
			rows[i] = []string{itoa(t.Id), t.Name, user, t.CreatedAt.Local().Format(time.DateTime), timeOr(t.ExpiresAt, "never"), timeOr(t.RevokedAt, "")}
		}
		return s.printTable([]string{"ID", "NAME", "USER", "CREATED", "EXPIRES", "REVOKED"}, rows)
	})
}

func tokenCreate(ctx context.Context, s *session, args []string) error {
	days := s.flags.Int("expires-in-days", 90, "how long it lets requests in (at most 366)")
	rest, err := s.parse(args, 1)
	if err != nil {
		return err
	}
	resp, err := s.client.CreateTokenWithResponse(ctx, api.TokenInput{Name: rest[0], ExpiresInDays: days})
	if err := expect(resp, err, http.StatusCreated); err != nil {
		return err
	}
	token := *resp.JSON201
	return s.printOutput(token, func() error { return s.printNewToken("yours", token) })
}

func tokenRevoke(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.RevokeTokenWithResponse(ctx, id)
	return expect(resp, err, http.StatusNoContent)
}

// printNewToken prints a token just made, whose secret is shown this once.
func (s *session) printNewToken(owner string, t api.NewAPIToken) error {
	return s.printFields([][2]string{
		{"for", owner},
		{"token", fmt.Sprintf("%d: %s", t.Id, t.Name)},
		{"expires", timeOr(t.ExpiresAt, "never")},
		{"secret", t.Secret},
		{"note", "the secret is shown this once: set it as MAILMIGRATE_API_TOKEN, or sign in to the console with it"},
	})
}
