package transfer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/emersion/go-sasl"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/sieve"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// ScriptsResult is what became of an account's Sieve scripts. Scripts
// only ever add to the destination: one it holds alone is never deleted.
type ScriptsResult struct {
	// Copied were put on the destination: new there, or changed on the
	// source since. Unchanged were there already as the source has them.
	Copied, Unchanged []string
	// Active is the source's active script, made active on the
	// destination too; "" when the source has none.
	Active string
	// Renamed are the folders the scripts file into that the folder
	// plan renamed, rewritten in the copies.
	Renamed []ScriptRename
	// Refused are the scripts the destination would not take, in its
	// words (an extension it lacks, a size limit, too many scripts).
	Refused []ScriptRefusal
	// Unread are scripts whose folders could not be read (not Sieve the
	// reader knows): copied as they are, with the reason.
	Unread []ScriptRefusal
	// Kept are the destination's own changes a pass left alone: a copy
	// edited there since a pass put it, or an active script changed
	// there since a pass set it, with why.
	Kept []ScriptRefusal
	// Error says why the scripts could not be moved at all (a side
	// without ManageSieve, a refused login); the messages are not
	// affected.
	Error string
}

// ScriptRename is a folder a script files into, renamed by the plan.
type ScriptRename struct {
	Script string
	sieve.Rename
}

// ScriptRefusal is a script and what was said of it.
type ScriptRefusal struct {
	Script, Reason string
}

// copyScripts moves the account's Sieve scripts, once an attempt, after its
// messages: each by name, with the folders it files into renamed as the
// plan renamed them, and the source's active one made active. A failure
// here is reported in the result and never fails the account.
func (r *accountAttempt) copyScripts(ctx context.Context, plans []folderPlan, src, dst namespace) {
	if r.scripts == nil {
		r.scripts = r.scriptsOf(ctx, plans, src, dst, false)
	}
}

// planScripts is what copyScripts would do, the destination's CHECKSCRIPT
// answering in place of PUTSCRIPT: nothing is written.
func (r *accountAttempt) planScripts(ctx context.Context, plans []folderPlan, src, dst namespace) *ScriptsResult {
	return r.scriptsOf(ctx, plans, src, dst, true)
}

// scriptsOf moves the scripts, or with dry only checks them; nil when the
// source names no ManageSieve.
func (r *accountAttempt) scriptsOf(ctx context.Context, plans []folderPlan, src, dst namespace, dry bool) *ScriptsResult {
	if r.job.Source.Sieve.Port == 0 {
		return nil
	}
	result := &ScriptsResult{}
	if r.job.Destination.Sieve.Port == 0 {
		result.Error = "the destination endpoint names no ManageSieve service: the scripts stay on the source"
		return result
	}
	renames := map[string]string{}
	for _, p := range plans {
		renames[p.Source.Name] = p.Destination
	}
	rename := func(folder string) (string, bool) {
		if to, ok := renames[folder]; ok {
			return to, true
		}
		return translateName(folder, src, dst), true
	}
	if err := r.moveScripts(ctx, result, rename, dry); err != nil {
		result.Error = err.Error()
		r.logger.Warn("the Sieve scripts were not moved", "err", err, "dry_run", dry)
	}
	return result
}

// scriptProblems are a plan's problems with the scripts: each the
// destination would refuse, or why none can move. None blocks: the
// messages move whatever becomes of the scripts.
func scriptProblems(s ScriptsResult) []PlanProblem {
	var problems []PlanProblem
	if s.Error != "" {
		problems = append(problems, PlanProblem{Kind: ProblemSieveScript, Words: "the Sieve scripts cannot move: " + s.Error})
	}
	for _, refused := range s.Refused {
		problems = append(problems, PlanProblem{Kind: ProblemSieveScript,
			Words: fmt.Sprintf("the destination would refuse the Sieve script %q: %s", refused.Script, refused.Reason)})
	}
	return problems
}

// moveScripts reads the source's scripts and puts each on the destination
// that is not there as it is; with dry, it asks the destination to check
// each instead (CHECKSCRIPT) and changes nothing.
func (r *accountAttempt) moveScripts(ctx context.Context, result *ScriptsResult, rename func(string) (string, bool), dry bool) error {
	from, err := dialSieve(ctx, &r.job.Source, r.job.Tuning)
	if err != nil {
		return fmt.Errorf("source ManageSieve: %w", err)
	}
	defer from.Close()
	to, err := dialSieve(ctx, &r.job.Destination, r.job.Tuning)
	if err != nil {
		return fmt.Errorf("destination ManageSieve: %w", err)
	}
	defer to.Close()
	sources, err := readScripts(from)
	if err != nil {
		return fmt.Errorf("source ManageSieve: %w", err)
	}
	existing, err := readScripts(to)
	if err != nil {
		return fmt.Errorf("destination ManageSieve: %w", err)
	}
	states, err := r.sync.scriptStates(ctx)
	if err != nil {
		return err
	}
	m := scriptMove{ledger: r.sync, to: to, states: states, result: result, dry: dry}
	for _, name := range slices.Sorted(maps.Keys(sources.content)) {
		content, renamed, err := sieve.RewriteFolders(sources.content[name], rename)
		if err != nil {
			result.Unread = append(result.Unread, ScriptRefusal{name, err.Error()})
		}
		for _, rn := range renamed {
			result.Renamed = append(result.Renamed, ScriptRename{Script: name, Rename: rn})
		}
		have, onDestination := existing.content[name]
		if err := m.move(ctx, name, content, have, onDestination); err != nil {
			return err
		}
	}
	return m.activate(ctx, sources.active, existing.active)
}

// scriptMove moves one account's scripts, one by one.
type scriptMove struct {
	ledger *syncLedger // keeps what each pass put
	to     *sieve.Client
	states map[string]syncstate.ScriptState // what earlier passes put
	result *ScriptsResult
	dry    bool
}

// The words for a destination's own change that a pass keeps.
const (
	editedOnDestination = "edited on the destination since it was copied: the destination's is kept"
	editedOnBoth        = "changed on both servers since it was copied: the destination's is kept, the source's changes are not copied"
	activeChanged       = "the destination's active script was changed there since this one was made active: the destination's choice is kept"
)

// move puts one script, content as the plan renames it, unless the
// destination has it as it is (have), or its copy there was edited since
// an earlier pass put it: a user's edit on the new server is never
// overwritten.
func (m *scriptMove) move(ctx context.Context, name, content, have string, onDestination bool) error {
	prev, known := m.states[name]
	switch {
	case onDestination && have == content:
		m.result.Unchanged = append(m.result.Unchanged, name)
		return m.record(ctx, name, content, prev.Active)
	case onDestination && known && digest(have) != prev.SHA256:
		why := editedOnDestination
		if digest(content) != prev.SHA256 {
			why = editedOnBoth
		}
		m.result.Kept = append(m.result.Kept, ScriptRefusal{name, why})
		return nil
	}
	var err error
	if m.dry {
		err = m.to.CheckScript(content)
	} else {
		err = m.to.PutScript(name, content)
	}
	var refusal *sieve.Error
	switch {
	case errors.As(err, &refusal) && refusal.Status == "NO":
		m.result.Refused = append(m.result.Refused, ScriptRefusal{name, err.Error()})
		return nil
	case err != nil:
		return fmt.Errorf("destination ManageSieve: putting %q: %w", name, err)
	}
	m.result.Copied = append(m.result.Copied, name)
	return m.record(ctx, name, content, prev.Active)
}

// record keeps what the destination holds of a script as put by this
// engine; nothing on a dry run.
func (m *scriptMove) record(ctx context.Context, name, content string, active bool) error {
	st := syncstate.ScriptState{Servers: m.ledger.servers, SHA256: digest(content), Active: active}
	if m.dry || m.states[name] == st {
		return nil
	}
	m.states[name] = st
	if err := m.ledger.store.SetScriptState(ctx, name, st); err != nil {
		return fmt.Errorf("storing the scripts' sync state: %w", err)
	}
	return nil
}

// activate makes the source's active script the destination's, unless
// the destination refused or kept its own copy of it, or its active
// script was changed there since an earlier pass set it (a user who
// turned off the vacation reply on the new server keeps it off); with
// dry, it only says it would.
func (m *scriptMove) activate(ctx context.Context, active, destinationActive string) error {
	refused := func(list []ScriptRefusal) bool {
		return slices.ContainsFunc(list, func(s ScriptRefusal) bool { return s.Script == active })
	}
	switch {
	case active == "" || refused(m.result.Refused):
		return nil
	case destinationActive == active:
		m.result.Active = active
		return nil
	case refused(m.result.Kept):
		return nil // the destination's own copy, left as it is
	case m.states[active].Active:
		m.result.Kept = append(m.result.Kept, ScriptRefusal{active, activeChanged})
		return nil
	}
	m.result.Active = active
	if m.dry {
		return nil
	}
	if err := m.to.SetActive(active); err != nil {
		return fmt.Errorf("destination ManageSieve: activating %q: %w", active, err)
	}
	for name, st := range m.states {
		if st.Active != (name == active) {
			st.Active = name == active
			if err := m.ledger.store.SetScriptState(ctx, name, st); err != nil {
				return fmt.Errorf("storing the scripts' sync state: %w", err)
			}
		}
	}
	return nil
}

// digest is the hex SHA-256 of a script.
func digest(content string) string {
	sum := sha256.Sum256([]byte(content))
	return hex.EncodeToString(sum[:])
}

// accountScripts are an account's scripts by name, and its active one.
type accountScripts struct {
	content map[string]string
	active  string
}

func readScripts(c *sieve.Client) (accountScripts, error) {
	list, err := c.ListScripts()
	if err != nil {
		return accountScripts{}, err
	}
	scripts := accountScripts{content: map[string]string{}}
	for _, s := range list {
		content, err := c.GetScript(s.Name)
		if err != nil {
			return accountScripts{}, fmt.Errorf("reading %q: %w", s.Name, err)
		}
		scripts.content[s.Name] = content
		if s.Active {
			scripts.active = s.Name
		}
	}
	return scripts, nil
}

// dialSieve connects to side's ManageSieve, secures the connection as its
// service says, and logs in with the account's credentials.
func dialSieve(ctx context.Context, side *imapconn.Side, tuning Tuning) (*sieve.Client, error) {
	// The account's server, at ManageSieve's port and with its security.
	server := side.Server
	server.Port, server.Security = side.Sieve.Port, side.Sieve.Security
	conn, err := imapconn.Dial(ctx, &server, tuning.GreetingTimeout)
	if err != nil {
		return nil, err
	}
	c, err := sieve.NewClient(conn, tuning.GreetingTimeout, tuning.IdleTimeout)
	if err != nil {
		return nil, err
	}
	if server.Security != imapconn.SecurityTLS && server.Security != imapconn.SecurityPlain {
		if err := c.StartTLS(server.TLSConfig()); err != nil {
			c.Close()
			return nil, err
		}
	}
	mech, err := sieveMechanism(ctx, side)
	if err == nil {
		err = c.Authenticate(mech)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("logging in: %w", err)
	}
	return c, nil
}

// sieveMechanism is the SASL login the side's credentials make, as for
// IMAP: its token, or its password (its master's on its behalf) over
// PLAIN, since ManageSieve has no LOGIN command.
func sieveMechanism(ctx context.Context, side *imapconn.Side) (sasl.Client, error) {
	if side.Token != nil {
		token, err := side.AccessToken(ctx)
		if err != nil {
			return nil, err
		}
		return side.SASLToken(token), nil
	}
	user, password, authzid, err := side.Credentials()
	if err != nil {
		return nil, err
	}
	return sasl.NewPlainClient(authzid, user, password), nil
}
