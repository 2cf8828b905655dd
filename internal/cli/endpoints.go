package cli

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

func endpointCommands() []command {
	return []command{
		{"list", "", "List the IMAP servers", endpointsList},
		{"get", "ID", "Show one IMAP server", endpointsGet},
		{"create", "", "Register an IMAP server; prints its id", endpointsCreate},
		{"update", "ID", "Change the given fields of an IMAP server", endpointsUpdate},
		{"delete", "ID", "Delete an IMAP server that no task uses", endpointsDelete},
		{"check", "ID", "Connect to an IMAP server without logging in; exit 1 and say what to do if it fails", endpointsCheck},
	}
}

func endpointsCheck(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.CheckEndpointWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	c := *resp.JSON200
	err = s.printOutput(c, func() error {
		fields := [][2]string{{"Address", c.Address}}
		if c.Ok {
			fields = append(fields, [2]string{"Works", fmt.Sprintf("yes, in %d ms", c.TookMs)})
		} else {
			fields = append(fields, [2]string{"Problem", c.Problem}, [2]string{"Advice", c.Advice})
		}
		if t := c.Tls; t != nil {
			fields = append(fields, [2]string{"TLS", fmt.Sprintf("%s, %s issued by %s, until %s, %s", t.Version, t.Subject, t.Issuer,
				t.NotAfter.Format(time.DateOnly), map[bool]string{true: "trusted", false: "not trusted"}[t.Verified])})
		}
		fields = append(fields, [2]string{"Greeting", orDash(c.Greeting)}, [2]string{"Capabilities", orDash(strings.Join(c.Capabilities, " "))})
		for _, note := range c.Notes {
			fields = append(fields, [2]string{"Note", note})
		}
		return s.printFields(fields)
	})
	if err == nil && !c.Ok {
		return &unfinishedError{reason: fmt.Sprintf("endpoint %d does not work as configured", id)}
	}
	return err
}

func endpointsList(ctx context.Context, s *session, args []string) error {
	if _, err := s.parse(args, 0); err != nil {
		return err
	}
	resp, err := s.client.ListEndpointsWithResponse(ctx)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return err
	}
	return s.printOutput(*resp.JSON200, func() error { return printEndpoints(s, *resp.JSON200) })
}

func printEndpoints(s *session, endpoints []api.Endpoint) error {
	rows := make([][]string, 0, len(endpoints))
	for _, e := range endpoints {
		rows = append(rows, []string{itoa(e.Id), orDash(e.RoleLabel), e.Host, strconv.Itoa(e.Port), string(e.TlsMode), skipVerifyText(e.TlsSkipVerify)})
	}
	return s.printTable([]string{"ID", "ROLE", "HOST", "PORT", "TLS", "CERTIFICATE"}, rows)
}

func skipVerifyText(skip bool) string {
	if skip {
		return "not verified (unsafe)"
	}
	return "verified"
}

func endpointsGet(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	e, err := getEndpoint(ctx, s, id)
	if err != nil {
		return err
	}
	return s.printOutput(e, func() error {
		return s.printFields([][2]string{
			{"ID", itoa(e.Id)}, {"Role", orDash(e.RoleLabel)}, {"Host", e.Host}, {"Port", strconv.Itoa(e.Port)},
			{"TLS", string(e.TlsMode)}, {"Certificate", skipVerifyText(e.TlsSkipVerify)},
		})
	})
}

func getEndpoint(ctx context.Context, s *session, id int64) (api.Endpoint, error) {
	resp, err := s.client.GetEndpointWithResponse(ctx, id)
	if err := expect(resp, err, http.StatusOK); err != nil {
		return api.Endpoint{}, err
	}
	return *resp.JSON200, nil
}

// parseOneID parses the flags and a single positional id.
func (s *session) parseOneID(args []string, name string) (int64, error) {
	pos, err := s.parse(args, 1)
	if err != nil {
		return 0, err
	}
	return s.parseID(name, pos[0])
}

// endpointFlags binds the fields of an endpoint to flags, starting from in.
func endpointFlags(fs *flag.FlagSet, in *api.EndpointInput) {
	fs.StringVar(&in.Host, "host", in.Host, "host name or IP address")
	fs.IntVar(&in.Port, "port", in.Port, "TCP port; 0 means 993 for ssl, 143 otherwise")
	fs.Func("tls-mode", "ssl, starttls or plain (default ssl)", func(v string) error {
		in.TlsMode = api.TLSMode(v)
		return nil
	})
	fs.StringVar(&in.RoleLabel, "role-label", in.RoleLabel, "free text naming the server's role, e.g. \"old provider\"")
	fs.BoolVar(&in.TlsSkipVerify, "tls-skip-verify", in.TlsSkipVerify, "accept any certificate (self-signed servers); unsafe")
}

func endpointsCreate(ctx context.Context, s *session, args []string) error {
	in := api.EndpointInput{TlsMode: api.TLSModeSsl}
	endpointFlags(s.flags, &in)
	if _, err := s.parse(args, 0); err != nil {
		return err
	}
	resp, err := s.client.CreateEndpointWithResponse(ctx, in)
	if err := expect(resp, err, http.StatusCreated); err != nil {
		return err
	}
	return s.printCreated(resp.JSON201.Id)
}

// endpointsUpdate changes only the fields given as flags: it reads the
// record and puts it back whole, because PUT replaces every field.
func endpointsUpdate(ctx context.Context, s *session, args []string) error {
	var in api.EndpointInput
	endpointFlags(s.flags, &in)
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	current, err := getEndpoint(ctx, s, id)
	if err != nil {
		return err
	}
	merged := api.EndpointInput{Host: current.Host, Port: current.Port, RoleLabel: current.RoleLabel, TlsMode: current.TlsMode, TlsSkipVerify: current.TlsSkipVerify}
	s.flags.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "host":
			merged.Host = in.Host
		case "port":
			merged.Port = in.Port
		case "tls-mode":
			merged.TlsMode = in.TlsMode
		case "role-label":
			merged.RoleLabel = in.RoleLabel
		case "tls-skip-verify":
			merged.TlsSkipVerify = in.TlsSkipVerify
		}
	})
	resp, err := s.client.UpdateEndpointWithResponse(ctx, id, merged)
	return expect(resp, err, http.StatusNoContent)
}

func endpointsDelete(ctx context.Context, s *session, args []string) error {
	id, err := s.parseOneID(args, "ID")
	if err != nil {
		return err
	}
	resp, err := s.client.DeleteEndpointWithResponse(ctx, id)
	return expect(resp, err, http.StatusNoContent)
}
