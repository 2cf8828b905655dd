package cli

import (
	"context"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// accountsAuthorize gets an account its refresh token for a side from its
// user's sign-in. Device flow: it prints the provider's page and the code
// to enter there, then waits until the service has stored the token.
// Browser flow: it prints the sign-in address and listens on loopback for
// the provider to send the browser back, then hands that address to the
// service, which redeems the code.
func accountsAuthorize(ctx context.Context, s *session, args []string) error {
	var side, flow string
	s.flags.StringVar(&side, "side", "", "source or destination: the side whose endpoint takes refresh tokens (required)")
	s.flags.StringVar(&flow, "flow", "", "device or browser; left out, device where the endpoint has a device URL, else browser")
	poll := s.flags.Duration("poll", 2*time.Second, "device flow: how often to look whether the user has signed in")
	var alsoAccept []string
	s.flags.Func("also-accept", "another name the account's user may sign in as (the same mailbox under another name); repeatable",
		func(name string) error { alsoAccept = append(alsoAccept, name); return nil })
	taskID, id, err := s.parseTaskAndAccount(args)
	if err != nil {
		return err
	}
	if side != "source" && side != "destination" {
		return s.usageErrorf("want --side source or --side destination")
	}
	in := api.AuthorizationInput{Side: api.AuthorizationInputSide(side), AlsoAccept: alsoAccept}
	switch api.AuthorizationFlow(flow) {
	case "":
	case api.AuthorizationFlowDevice, api.AuthorizationFlowBrowser:
		in.Flow = (*api.AuthorizationFlow)(&flow)
	default:
		return s.usageErrorf("want --flow device or --flow browser")
	}
	// The provider sends the browser back here; Google and Microsoft take
	// any port on loopback for an installed application (RFC 8252 §7.3).
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer listener.Close()
	in.RedirectUri = fmt.Sprintf("http://%s/", listener.Addr())
	// Only what comes after the start tells how a device flow ended.
	after, err := newestSeq(func(after int64) ([]api.Event, error) { return accountEventPage(ctx, s, taskID, id, after) })
	if err != nil {
		return err
	}
	resp, err := s.client.AuthorizeAccountWithResponse(ctx, taskID, id, in)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	started := *resp.JSON200
	if started.Flow == api.AuthorizationFlowBrowser {
		err = awaitBrowser(ctx, s, listener, in.RedirectUri, started)
	} else {
		listener.Close()
		err = awaitDevice(ctx, s, taskID, id, side, after, *poll, started)
	}
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.sys.Stdout, "The %s refresh token is stored.\n", side)
	return err
}

// awaitDevice prints where to enter the code and watches the account's
// events for the outcome.
func awaitDevice(ctx context.Context, s *session, taskID, id int64, side string, after int64, poll time.Duration, da api.Authorization) error {
	page := da.VerificationUri
	if da.VerificationUriComplete != "" {
		page = da.VerificationUriComplete
	}
	fmt.Fprintf(s.sys.Stdout, "Open %s, enter the code %s and sign in as the account's user, before %s.\n",
		page, da.UserCode, da.ExpiresAt.Local().Format(time.TimeOnly))
	for {
		if !sleep(ctx, poll) {
			return ctx.Err()
		}
		if time.Now().After(da.ExpiresAt) {
			return &unfinishedError{reason: "the code expired before anyone signed in; start again"}
		}
		events, err := accountEventPage(ctx, s, taskID, id, after)
		if err != nil {
			return err
		}
		for _, e := range events {
			after = e.Seq
			switch {
			case e.Side != side:
			case e.Kind == api.EventKindAccountAuthorized:
				return nil
			case e.Kind == api.EventKindError:
				return &unfinishedError{reason: e.Message + ": " + e.Error}
			}
		}
	}
}

// returnPage is what the browser shows once it is back on loopback.
var returnPage = template.Must(template.New("return").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mailmigrate: {{.}}</title></head>
<body><p>{{.}}</p></body></html>
`))

// awaitBrowser prints the sign-in address and serves the provider's
// redirect on listener: the first request with a state is handed to the
// service, and the browser is told the outcome.
func awaitBrowser(ctx context.Context, s *session, listener net.Listener, redirectURI string, started api.Authorization) error {
	fmt.Fprintf(s.sys.Stdout, "Open this address in a browser on this machine and sign in as the account's user, before %s:\n%s\n",
		started.ExpiresAt.Local().Format(time.TimeOnly), started.AuthorizationUrl)
	outcome := make(chan error, 1)
	server := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("state") == "" {
			http.NotFound(w, r) // a browser's favicon, or a stray visit
			return
		}
		address := redirectURI + "?" + r.URL.RawQuery
		done, err := s.client.CompleteAuthorizationWithResponse(r.Context(), api.AuthorizationAddress{Address: address})
		err = expect(done, err, http.StatusOK)
		words := "The refresh token is stored. You can close this window."
		if err != nil {
			words = "Not authorized: " + err.Error()
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		returnPage.Execute(w, words) //nolint:errcheck // a browser that left is no matter
		select {
		case outcome <- err:
		default: // an outcome is in already
		}
	})}
	go server.Serve(listener) //nolint:errcheck // ends with Shutdown below
	// Shutdown, not Close: the handler hands the outcome over before its
	// page has gone out, and the browser must still get the page.
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		server.Shutdown(ctx) //nolint:errcheck // a browser that lingers is cut off
	}()
	timer := time.NewTimer(time.Until(started.ExpiresAt))
	defer timer.Stop()
	select {
	case err := <-outcome:
		return err
	case <-timer.C:
		return &unfinishedError{reason: "nobody signed in before the authorization expired; start again"}
	case <-ctx.Done():
		return ctx.Err()
	}
}
