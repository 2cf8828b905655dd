package transfer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
	"github.com/mailmigrate/mailmigrate/internal/transfer/syncstate"
)

// maxBackoff caps the wait between tries. After a transient failure the
// whole account is tried again (Tuning.Attempts), waiting Tuning.Backoff,
// then twice as long each time. Work already done is not redone: finished
// folders are skipped, and identities keep a folder's second try from
// copying anything twice.
const maxBackoff = 30 * time.Second

// maxThrottlePause caps the doubling pause after throttles without a hint.
const maxThrottlePause = 30 * time.Minute

// accountRun is one migration of one account.
type accountRun struct {
	job         *Job
	source      *session
	destination *session
	appender    *imapconn.Appender // APPENDs to the destination, on its session's connection; made at the first folder with something to copy
	store       syncstate.StateStore
	states      map[string]syncstate.FolderState // by source folder, as the last run left them
	servers     string                           // FolderState.Servers of this job
	progress    Progress
	figures     figures
	folders     []FolderResult
	finished    map[string]bool // source folders done in this run
	// folderCounts are the source folders' sizes, by name (countSource).
	folderCounts map[string]SourceCount
	logger       *slog.Logger
	// labelListing is a source's folders as listed (anew each attempt)
	// where its messages are labels over All Mail (sourceModel), and
	// labels what its messages are labelled and where each goes, read
	// when a folder read from All Mail first needs it (gmail.go), and
	// again only when it no longer fits (labelIndex).
	labelListing []mailbox
	labels       *labelIndex
	plans        []folderPlan
	// destinationAllMail is the destination's folder of every message
	// (destinationModel), where twins finds the messages a folder may get
	// by a label (gmailin.go); "" where it has none.
	destinationAllMail string
	twins              *allMailTwins
	// destinationBins are the destination's folders a COPY into moves
	// the message, labels and all (Gmail's Trash and Spam): never given
	// a twin.
	destinationBins map[string]bool
	// destinationProfile is the destination's provider, for the limits
	// it does not announce (profile.go).
	destinationProfile provider.Profile
	// sourceProfile is the source's, and sourceLimits and
	// destinationLimits both sides' limits: their endpoints' own, else
	// their profiles'.
	sourceProfile                   provider.Profile
	sourceLimits, destinationLimits provider.Limits
	// scripts is what became of the Sieve scripts, once moved (copyScripts).
	scripts *ScriptsResult
}

// labelIndex returns the run's label index, reading it the first time,
// or again when the plan reads other folders from All Mail, or when All
// Mail as a folder has just opened it (selected) is not as it was read:
// a message arrived or changed labels meanwhile. The folder's state
// records what it opened, so the index must cover exactly that, or a
// message the index missed would pass for done. An attempt after a
// throttle or a reconnect keeps an index still good: on Gmail, reading it
// again spends the bandwidth that ran out.
func (r *accountRun) labelIndex(ctx context.Context, selected *imap.SelectData) (*labelIndex, error) {
	_, folders := readFromAllMail(r.plans)
	if x := r.labels; x != nil && slices.Equal(x.folders, folders) && (selected == nil ||
		x.uidValidity == selected.UIDValidity && x.uidNext == selected.UIDNext && x.highestModSeq == selected.HighestModSeq) {
		return x, nil
	}
	x, err := r.buildLabelIndex(ctx, r.labelListing, r.plans, 0)
	if err != nil {
		return nil, err
	}
	r.labels = x
	return x, nil
}

// Migrate copies what the destination lacks of job's account. It returns
// the figures and the new sync state even when it fails part-way, so that
// the caller can store them.
func Migrate(ctx context.Context, job Job) (Result, error) {
	r, err := newAccountRun(ctx, job)
	if err != nil {
		return Result{}, err
	}
	err = r.withRetries(ctx)
	return Result{Progress: r.progress, Folders: r.folders, Scripts: r.scripts}, err
}

// newAccountRun readies the run of job: the tuning's defaults, and the
// sync state the last run left.
func newAccountRun(ctx context.Context, job Job) (*accountRun, error) {
	job.Tuning = job.Tuning.withDefaults()
	r := &accountRun{job: &job, store: job.State, finished: map[string]bool{}, logger: job.Logger,
		servers: sideKey(&job.Source) + " → " + sideKey(&job.Destination)}
	r.figures = newFigures(&r.progress)
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	if r.store == nil {
		r.store = syncstate.NewMemoryState()
	}
	states, err := r.store.FolderStates(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the sync state: %w", err)
	}
	r.states = states
	return r, nil
}

// sideKey names the mailbox a side is: server and login.
func sideKey(s *imapconn.Side) string { return s.Address() + "/" + s.Login }

// withRetries runs attempts until one ends the account: a transient
// failure is tried again (Tuning.Attempts in all); a throttle pauses as
// the server asks and goes on without using up an attempt, up to
// Tuning.Throttles of them, the pause of an unhinted one doubling each
// time. A pause longer than Tuning.LongestWait ends the run with a
// *PausedError instead: the account is started again when it ends. A
// session the server ended because its access token expired logs in
// again at once with a fresh token, without using up an attempt, as long
// as the run got on since the last such end: a mailbox that takes hours
// outlives many tokens.
func (r *accountRun) withRetries(ctx context.Context) error {
	backoff := r.job.Tuning.Backoff
	throttles, unhinted := 0, r.job.Tuning.ThrottlePause
	lastExpiry := -1 // the run's headway (headway) at the last token expiry
	for attempt := 1; ; attempt++ {
		err := r.attempt(ctx)
		if imapconn.TokenExpired(err) && ctx.Err() == nil && r.headway() != lastExpiry {
			lastExpiry = r.headway()
			r.logger.Info("the server ended the session as its access token expired; logging in again with a fresh one", "err", err)
			attempt-- // a token's end is not a failure
			continue
		}
		if imapconn.KindOf(err) == imapconn.KindThrottled && ctx.Err() == nil && throttles < r.job.Tuning.Throttles {
			throttles++
			t := throttle(err, unhinted)
			if time.Until(t.Until) > r.job.Tuning.LongestWait {
				r.noteThrottle(t)
				return &PausedError{Throttle: t, Err: err}
			}
			if !r.pauseForThrottle(ctx, t) {
				return ctx.Err()
			}
			unhinted = min(2*unhinted, maxThrottlePause)
			attempt-- // a throttle is not a failure
			continue
		}
		if err == nil || imapconn.KindOf(err) != imapconn.KindTransient || ctx.Err() != nil || attempt == r.job.Tuning.Attempts {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		r.logger.Warn("migration interrupted; reconnecting", "err", err, "attempt", attempt, "wait", backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// headway is how far the run got: messages copied or found, and folders
// done.
func (r *accountRun) headway() int {
	return r.progress.MessagesCopied + r.progress.MessagesSkipped + r.progress.FoldersDone
}

// attempt connects to both sides and copies every folder not finished yet.
func (r *accountRun) attempt(ctx context.Context) error {
	src, dst, err := r.open(ctx)
	if err != nil {
		return err
	}
	defer src.session.Close()
	if dst.session == nil { // the source alone said nothing is to do
		r.source, r.destination, r.appender = src.session, nil, nil
		return r.finishUnchanged(ctx, src)
	}
	defer dst.session.Close()
	if !src.session.Caps().Has(imap.CapListExtended) {
		r.readSubscriptions(src.session, src.boxes)
	}
	r.source, r.destination, r.appender = src.session, dst.session, nil
	destination := destinationModelOf(dst.session.Caps())
	r.destinationAllMail, r.destinationBins, r.twins = destination.allMail(dst.boxes), destination.bins(dst.boxes), nil
	defer func() {
		if r.appender != nil {
			r.appender.Close()
		}
		if r.destination != dst.session { // a fresh one (appenderFor)
			r.destination.Close()
		}
		if r.twins != nil {
			r.twins.session.Close()
		}
	}()
	source := sourceModelOf(src.session.Caps(), &r.job.Options)
	boxes := source.folders(src.boxes)
	r.labelListing = source.labelListing(src.boxes)
	r.sourceProfile = profileOf(&r.job.Source, src.session.Caps())
	r.destinationProfile = profileOf(&r.job.Destination, dst.session.Caps())
	r.sourceLimits = provider.EffectiveLimits(r.sourceProfile, r.job.Source.Limits)
	r.destinationLimits = provider.EffectiveLimits(r.destinationProfile, r.job.Destination.Limits)
	plans := planFolders(boxes, dst.boxes, src.ns, dst.ns, &r.job.Options, r.previousDestinations(), r.reservedNames())
	if err := r.copyFolders(ctx, plans); err != nil {
		return err
	}
	r.copyScripts(ctx, plans, src.ns, dst.ns)
	return nil
}

// copyFolders copies every folder of plans not finished yet.
func (r *accountRun) copyFolders(ctx context.Context, plans []folderPlan) error {
	r.plans = plans
	r.progress.FoldersTotal = len(plans)
	if !r.progress.SourceCounted { // once a run: an attempt after a reconnect keeps the total
		if err := r.countSource(ctx, plans); err != nil {
			return err
		}
	}
	for _, plan := range plans {
		if r.finished[plan.Source.Name] {
			continue
		}
		r.progress.Folder = plan.Source.Name
		result, err := r.copyFolder(ctx, plan)
		if err != nil {
			return err
		}
		r.folders = append(r.folders, result)
		r.finished[plan.Source.Name] = true
		r.progress.FoldersDone++
		r.report()
		if r.job.OnFolderDone != nil {
			r.job.OnFolderDone(result, r.progress)
		}
	}
	return nil
}

// open logs in to both sides and lists their folders, at once: a re-run
// with nothing to copy is mostly this. A source-only delta
// (Job.SourceOnlyDelta) opens the source first and leaves the
// destination closed (dst.session nil) when the source's listing shows
// nothing to do.
func (r *accountRun) open(ctx context.Context) (src, dst openedSide, err error) {
	if !r.job.SourceOnlyDelta || !r.completedBefore() {
		return openBoth(ctx, r.job)
	}
	src = openSide(ctx, &r.job.Source, "source", r.job.Tuning)
	if src.err != nil {
		return src, dst, src.err
	}
	if r.sourceUnchanged(src) {
		return src, dst, nil
	}
	dst = openSide(ctx, &r.job.Destination, "destination", r.job.Tuning)
	if dst.err != nil {
		src.session.Close()
		return src, dst, dst.err
	}
	return src, dst, nil
}

// completedBefore reports whether a pass between these two mailboxes
// completed a folder before: without one, the source cannot be found
// unchanged, and both sides are opened at once (a first copy).
func (r *accountRun) completedBefore() bool {
	for _, st := range r.states {
		if st.Complete && st.Servers == r.servers {
			return true
		}
	}
	return false
}

// sourceUnchanged reports whether the source's listing alone shows that
// the account is as its last complete pass left it: every folder the
// options want has a complete state of these servers and this filter,
// and its LIST-STATUS (with HIGHESTMODSEQ, so that a flag change shows)
// is the one that pass recorded. A Gmail source, whose labels are read
// from All Mail, is always compared on both sides.
func (r *accountRun) sourceUnchanged(src openedSide) bool {
	if !sourceModelOf(src.session.Caps(), &r.job.Options).listingShowsUnchanged() {
		return false
	}
	wanted := 0
	for _, b := range src.boxes {
		if !b.Selectable || !r.job.Options.wants(b.Name) {
			continue
		}
		wanted++
		prev, ok := r.states[b.Name]
		if !ok || prev.Servers != r.servers || prev.Reads != "" || !sourceAsLeft(prev, b.Status, r.job.Options.filterKey()) {
			return false
		}
		// A folder_map entry changed since: the plan, which needs the
		// destination's namespace, decides where the folder goes.
		if mapped, ok := r.job.Options.FolderMap[b.Name]; ok && mapped != prev.Destination {
			return false
		}
	}
	return wanted > 0
}

// finishUnchanged ends an attempt that the source's listing alone found
// with nothing to do: each folder goes where the last pass put it, and is
// reported unchanged (copyFolder), as by a pass that looked at both sides.
func (r *accountRun) finishUnchanged(ctx context.Context, src openedSide) error {
	var plans []folderPlan
	for _, b := range src.boxes {
		if b.Selectable && r.job.Options.wants(b.Name) {
			plans = append(plans, folderPlan{Source: b, Destination: r.states[b.Name].Destination})
		}
	}
	slices.SortFunc(plans, func(a, b folderPlan) int { return strings.Compare(a.Source.Name, b.Source.Name) })
	return r.copyFolders(ctx, plans)
}

// readSubscriptions marks the source folders that LSUB lists as
// subscribed, for a source without LIST-EXTENDED. Subscriptions are worth
// a warning, not the account: without them the copy goes on.
func (r *accountRun) readSubscriptions(source *session, boxes []mailbox) {
	subscribed, err := imapconn.SubscriptionsByLSUB(source.Session)
	if err != nil {
		r.logger.Warn("could not read the source's subscriptions (LSUB); they are not copied", "err", err)
		return
	}
	for i := range boxes {
		boxes[i].Subscribed = boxes[i].Subscribed || subscribed[boxes[i].Name]
	}
}

// openedSide is a logged-in session and its folders, or why there is none.
type openedSide struct {
	session *session
	boxes   []mailbox
	ns      namespace
	err     error
}

// openBoth logs in to both sides of job and lists their folders, at
// once; either failing closes the other.
func openBoth(ctx context.Context, job *Job) (src, dst openedSide, err error) {
	dstOpened := make(chan openedSide, 1)
	go func() { dstOpened <- openSide(ctx, &job.Destination, "destination", job.Tuning) }()
	src, dst = openSide(ctx, &job.Source, "source", job.Tuning), <-dstOpened
	for _, side := range []openedSide{src, dst} {
		if side.err != nil {
			for _, opened := range []openedSide{src, dst} {
				if opened.session != nil {
					opened.session.Close()
				}
			}
			return src, dst, side.err
		}
	}
	return src, dst, nil
}

func openSide(ctx context.Context, side *imapconn.Side, name string, tuning Tuning) openedSide {
	s, err := connect(ctx, side, name, tuning)
	if err != nil {
		return openedSide{err: err}
	}
	boxes, ns, err := s.listMailboxes()
	return openedSide{session: s, boxes: boxes, ns: ns, err: err}
}

// previousDestinations returns where each source folder went at the last
// run, with the same servers: the plan keeps it there.
func (r *accountRun) previousDestinations() map[string]string {
	prev := map[string]string{}
	for folder, st := range r.states {
		if st.Servers == r.servers {
			prev[folder] = st.Destination
		}
	}
	return prev
}

// appenderFor returns the APPEND writer, made the first time a folder has
// something to copy, on the destination session's own connection
// (sharedConn): the destination takes one login. A destination that signs
// in with a token first gets a fresh session in place of the one opened
// at the start: a provider ends a session at its token's expiry (Exchange
// Online does), and the source may have been read for longer than that
// before the first APPEND. The fresh session selects folder again, which
// must be the same folder (uidValidity).
func (r *accountRun) appenderFor(ctx context.Context, folder string, uidValidity uint32) (*imapconn.Appender, error) {
	if r.appender != nil {
		return r.appender, nil
	}
	if r.job.Destination.Token != nil {
		fresh, err := connect(ctx, &r.job.Destination, "destination", r.job.Tuning)
		if err != nil {
			return nil, err
		}
		selected, err := fresh.Select(folder, nil).Wait()
		if err == nil && selected.UIDValidity != uidValidity {
			err = fmt.Errorf("the folder %q changed (UIDVALIDITY %d, was %d) while the source was read", folder, selected.UIDValidity, uidValidity)
		}
		if err != nil {
			fresh.Close()
			return nil, fresh.Failed(err)
		}
		r.destination.Close()
		r.destination = fresh
	}
	r.appender = r.destination.Appender(r.job.Tuning.SingleAppend)
	return r.appender, nil
}

func (r *accountRun) report() {
	if r.job.OnProgress != nil {
		r.job.OnProgress(r.progress)
	}
}

// saveFolderState stores a folder's state, for this run's later attempts
// and for the next run.
func (r *accountRun) saveFolderState(ctx context.Context, folder string, st syncstate.FolderState) error {
	r.states[folder] = st
	if err := r.store.SetFolderState(ctx, folder, st); err != nil {
		return fmt.Errorf("storing the sync state: %w", err)
	}
	return nil
}

// resetFolder drops a folder's map and stores its new state.
func (r *accountRun) resetFolder(ctx context.Context, folder string, st syncstate.FolderState) error {
	r.states[folder] = st
	if err := r.store.ResetFolder(ctx, folder, st); err != nil {
		return fmt.Errorf("storing the sync state: %w", err)
	}
	return nil
}

// refused reports whether err is the server saying no to this folder (as
// opposed to the connection failing), which fails the folder alone.
func refused(err error) bool {
	var imapErr *imap.Error
	return errors.As(err, &imapErr) && imapconn.Classify(err) == imapconn.KindPermanent
}
