package comparison

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/mailmigrate/mailmigrate/internal/transfer"
	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// engineChildEnv makes the test binary, re-executed by engineTool, run one
// pass of the engine (engineChild) instead of the tests: so that the peak
// RSS and CPU time measured are those of the migration alone, not of a
// test process that holds the whole source corpus.
const engineChildEnv = "MAILMIGRATE_COMPARISON_ENGINE_CHILD"

// engineTool is this project's copy engine, transfer.Migrate, one
// goroutine per account, in a child process.
type engineTool struct{}

func (engineTool) name() string { return "engine" }

// endpoint is one side of an account, as the child receives it.
type endpoint struct {
	Host     string
	Port     int
	Login    string
	Password string
}

// engineRequest is what the parent writes to the child's stdin.
type engineRequest struct {
	Parallel int
	Accounts []engineAccount
}

type engineAccount struct {
	Source, Destination endpoint
	// StatePath holds the account's sync state between passes, as the
	// service's database would: read when present, written after.
	StatePath string
}

// engineOutcome is what the child reports per account on its stdout.
type engineOutcome struct {
	Copied     int
	Bytes      int64
	Failed     int // messages the destination refused
	Unverified int // folders whose counts did not verify
	Error      string
}

func (t engineTool) migrate(ctx context.Context, r *run) (usage, error) {
	req := engineRequest{Parallel: r.parallel}
	for _, a := range r.src.accounts {
		req.Accounts = append(req.Accounts, engineAccount{
			Source:      endpoint{r.src.dovecot.Host, r.src.dovecot.Port, a.srcLogin, a.srcPassword},
			Destination: endpoint{r.dst.Host, r.dst.Port, a.dstLogin, a.dstPassword},
			StatePath:   filepath.Join(r.dir, a.srcLogin+".state.json"),
		})
	}
	cmd, stdout, err := engineCommand(ctx, req)
	if err != nil {
		return usage{}, err
	}
	u, err := runProcesses(ctx, []*exec.Cmd{cmd}, 1)
	if err != nil {
		return u, err
	}
	return u, checkOutcomes(stdout.Bytes(), r.pass)
}

// engineCommand prepares the re-executed test binary with req on stdin.
func engineCommand(ctx context.Context, req engineRequest) (*exec.Cmd, *bytes.Buffer, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	in, err := json.Marshal(req)
	if err != nil {
		return nil, nil, err
	}
	var stdout bytes.Buffer
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), engineChildEnv+"=1")
	cmd.Stdin, cmd.Stdout = bytes.NewReader(in), &stdout
	return cmd, &stdout, nil
}

// checkOutcomes fails a pass in which an account failed, a message was
// refused or a folder did not verify; and a re-run that copied anything.
func checkOutcomes(out []byte, pass int) error {
	var outcomes []engineOutcome
	if err := json.Unmarshal(out, &outcomes); err != nil {
		return fmt.Errorf("engine child: bad report %q: %w", tail(string(out), 5), err)
	}
	var errs []error
	for i, o := range outcomes {
		switch {
		case o.Error != "":
			errs = append(errs, fmt.Errorf("account %d: %s", i+1, o.Error))
		case o.Failed > 0 || o.Unverified > 0:
			errs = append(errs, fmt.Errorf("account %d: %d messages refused, %d folders unverified", i+1, o.Failed, o.Unverified))
		case pass == 2 && o.Copied > 0:
			errs = append(errs, fmt.Errorf("account %d: the re-run copied %d messages again", i+1, o.Copied))
		}
	}
	return errors.Join(errs...)
}

// engineChild is the child's side: it migrates the accounts of the
// request on stdin, parallel at a time, and reports on stdout. It returns
// the process's exit code.
func engineChild(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	var req engineRequest
	if err := json.NewDecoder(stdin).Decode(&req); err != nil {
		fmt.Fprintln(stderr, "engine child: bad request:", err)
		return 2
	}
	outcomes := make([]engineOutcome, len(req.Accounts))
	sem := make(chan struct{}, max(req.Parallel, 1))
	var wg sync.WaitGroup
	for i, a := range req.Accounts {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			outcomes[i] = migrateAccount(ctx, a)
		})
	}
	wg.Wait()
	if err := json.NewEncoder(stdout).Encode(outcomes); err != nil {
		fmt.Fprintln(stderr, "engine child:", err)
		return 1
	}
	return 0
}

// migrateAccount runs transfer.Migrate for one account, with the state of
// the previous pass.
func migrateAccount(ctx context.Context, a engineAccount) engineOutcome {
	state, err := readState(a.StatePath)
	if err != nil {
		return engineOutcome{Error: err.Error()}
	}
	res, err := transfer.Migrate(ctx, transfer.Job{Source: a.Source.side(), Destination: a.Destination.side(), State: state})
	o := engineOutcome{Copied: int(res.MessagesCopied), Bytes: res.BytesCopied, Failed: int(res.MessagesFailed)}
	for _, f := range res.Folders {
		if !f.Verified() || f.Error != "" {
			o.Unverified++
		}
	}
	if err == nil {
		err = writeState(a.StatePath, state)
	}
	if err != nil {
		o.Error = err.Error()
	}
	return o
}

func (e endpoint) side() imapconn.Side {
	return imapconn.Side{
		Server: imapconn.Server{Host: e.Host, Port: e.Port, Security: imapconn.SecurityPlain},
		Login:  e.Login, Password: e.Password,
	}
}

// readState returns the state stored at path, or an empty one before the
// first pass.
func readState(path string) (*syncstate.MemoryState, error) {
	state := syncstate.NewMemoryState()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return state, nil
	}
	if err != nil {
		return nil, err
	}
	return state, json.Unmarshal(data, state)
}

func writeState(path string, state *syncstate.MemoryState) error {
	data, err := json.Marshal(state)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}
