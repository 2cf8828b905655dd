package transfer

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// maxBackoff caps the wait between tries. After a transient failure the
// whole account is tried again (Tuning.Tries), waiting Tuning.Backoff,
// then twice as long each time. Work already done is not redone: finished
// folders are skipped, and identities keep a folder's second try from
// copying anything twice.
const maxBackoff = 30 * time.Second

// maxThrottlePause caps the doubling pause after throttles without a hint.
const maxThrottlePause = 30 * time.Minute

// accountAttempt is the engine's part of an attempt: one account
// migrated in one job, over as many tries as its connections need. What
// it holds lives as long as one of two things: the attempt (its job, the
// sync ledger, what it found and did) or one try (the sessions and what
// they said of their servers, made again by each try).
type accountAttempt struct {
	job    *Job
	sync   *syncLedger // the folders' sync states
	logger *slog.Logger
	// sourceLabels is what the provider layer keeps of a source whose
	// messages are labels over an All Mail (Gmail); empty for one of plain
	// folders. Its index outlives a try: reading it again after a
	// reconnect would spend the bandwidth that ran out.
	sourceLabels sourceLabels
	attemptResults
	trySides
}

// attemptResults are what the attempt found and did, kept across its
// tries: the next try skips the folders finished.
type attemptResults struct {
	progress Progress
	figures  figures
	folders  []FolderResult
	finished map[string]bool // source folders done in this attempt
	// folderCounts are the source folders' sizes, by name (countSource).
	folderCounts map[string]SourceCount
	// scripts is what became of the Sieve scripts, once moved (copyScripts).
	scripts *ScriptsResult
}

// trySides is what one try holds of the two sides: its sessions, and
// what they told of their servers. beginTry makes it anew, so that
// nothing of a broken try's connections outlives it.
type trySides struct {
	source      *session
	destination *session
	appender    *imapconn.Appender // APPENDs to the destination, on its session's connection; made at the first folder with something to copy
	// sourceProvider and destinationProvider are each side's provider
	// and limits (profile.go).
	sourceProvider, destinationProvider sideProvider
	// destinationLabels is what the provider layer keeps of a destination
	// that files by labels over an All Mail (Gmail); empty for one of
	// plain folders.
	destinationLabels destinationLabels
	plans             []folderPlan
}

// beginTry starts a try on the sessions it opened, dropping what the
// last try held of its own. dst.session is nil when the source alone
// said nothing is to do.
func (r *accountAttempt) beginTry(src, dst openedSide) {
	r.trySides = trySides{source: src.session, sourceProvider: providerOf(&r.job.Source, src.session.Caps())}
	if dst.session == nil {
		return
	}
	destination := destinationModelOf(dst.session.Caps())
	r.destination = dst.session
	r.destinationProvider = providerOf(&r.job.Destination, dst.session.Caps())
	r.destinationLabels = destinationLabels{allMail: destination.allMail(dst.boxes), bins: destination.bins(dst.boxes)}
}

// Migrate copies what the destination lacks of job's account. It returns
// the figures and the new sync state even when it fails part-way, so that
// the caller can store them.
func Migrate(ctx context.Context, job Job) (Result, error) {
	r, err := newAccountAttempt(ctx, job)
	if err != nil {
		return Result{}, err
	}
	err = r.withRetries(ctx)
	return Result{Progress: r.progress, Folders: r.folders, Scripts: r.scripts}, err
}

// newAccountAttempt readies the attempt of job: the tuning's defaults, and the
// sync state the last attempt left.
func newAccountAttempt(ctx context.Context, job Job) (*accountAttempt, error) {
	job.Tuning = job.Tuning.withDefaults()
	ledger, err := readLedger(ctx, &job)
	if err != nil {
		return nil, err
	}
	r := &accountAttempt{job: &job, sync: ledger, logger: job.Logger, attemptResults: attemptResults{finished: map[string]bool{}}}
	r.figures = newFigures(&r.progress)
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	return r, nil
}

// withRetries connects and copies until a try ends the attempt: a
// transient failure is tried again (Tuning.Tries in all); a throttle
// pauses as the server asks and goes on without using up a try, up to
// Tuning.Throttles of them, the pause of an unhinted one doubling each
// time. A pause longer than Tuning.LongestWait ends the attempt with a
// *PausedError instead: the account is started again when it ends. A
// session the server ended because its access token expired logs in
// again at once with a fresh token, without using up a try, as long as
// the attempt got on since the last such end: a mailbox that takes hours
// outlives many tokens.
func (r *accountAttempt) withRetries(ctx context.Context) error {
	backoff := r.job.Tuning.Backoff
	throttles, unhinted := 0, r.job.Tuning.ThrottlePause
	lastExpiry := int64(-1) // the attempt's headway at the last token expiry
	for try := 1; ; try++ {
		err := r.connectAndCopy(ctx)
		if imapconn.TokenExpired(err) && ctx.Err() == nil && r.headway() != lastExpiry {
			lastExpiry = r.headway()
			r.logger.Info("the server ended the session as its access token expired; logging in again with a fresh one", "err", err)
			try-- // a token's end is not a failure
			continue
		}
		if imapconn.KindOf(err) == imapconn.KindThrottled && ctx.Err() == nil && throttles < r.job.Tuning.Throttles {
			throttles++
			t := throttle(err, unhinted)
			if time.Until(t.Until) > r.job.Tuning.LongestWait {
				// Told by the error: the job is not told of a pause it does not wait.
				r.logger.Warn("pausing in a later attempt", "side", t.Side, "words", t.Words, "until", t.Until, "budget", t.Budget)
				return &PausedError{Throttle: t, Err: err}
			}
			if !r.pauseForThrottle(ctx, t) {
				return ctx.Err()
			}
			unhinted = min(2*unhinted, maxThrottlePause)
			try-- // a throttle is not a failure
			continue
		}
		if err == nil || imapconn.KindOf(err) != imapconn.KindTransient || ctx.Err() != nil || try == r.job.Tuning.Tries {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		r.logger.Warn("migration interrupted; reconnecting", "err", err, "try", try, "wait", backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// headway is how far the attempt got: messages copied or found, and folders
// done.
func (r *accountAttempt) headway() int64 {
	return r.progress.MessagesCopied + r.progress.MessagesSkipped + r.progress.FoldersDone
}

// connectAndCopy is one try: it connects to both sides and copies every
// folder not finished yet.
func (r *accountAttempt) connectAndCopy(ctx context.Context) error {
	src, dst, err := r.open(ctx)
	if err != nil {
		return err
	}
	defer src.session.Close()
	r.beginTry(src, dst)
	if dst.session == nil { // the source alone said nothing is to do
		return r.finishUnchanged(ctx, src)
	}
	defer dst.session.Close()
	if !src.session.Caps().Has(imap.CapListExtended) {
		r.readSubscriptions(src.session, src.boxes)
	}
	defer func() {
		if r.appender != nil {
			r.appender.Close()
		}
		if r.destination != dst.session { // a fresh one (appenderFor)
			r.destination.Close()
		}
		if twins := r.destinationLabels.twins; twins != nil {
			twins.session.Close()
		}
	}()
	source := sourceModelOf(src.session.Caps(), &r.job.Options)
	boxes := source.folders(src.boxes)
	r.sourceLabels.listing = source.labelListing(src.boxes)
	plans := planFolders(boxes, dst.boxes, src.ns, dst.ns, &r.job.Options, r.sync.previousDestinations(), r.reservedNames())
	if err := r.copyFolders(ctx, plans); err != nil {
		return err
	}
	r.copyScripts(ctx, plans, src.ns, dst.ns)
	return nil
}

// copyFolders copies every folder of plans not finished yet.
func (r *accountAttempt) copyFolders(ctx context.Context, plans []folderPlan) error {
	r.plans = plans
	r.progress.FoldersTotal = int64(len(plans))
	if !r.progress.SourceCounted { // once an attempt: a try after a reconnect keeps the total
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
			// What was found empty stays found, whatever ended the try.
			if serr := r.sync.storeEmptied(context.WithoutCancel(ctx)); serr != nil {
				r.logger.Warn("the empty folders' states were not stored; the next pass looks at them again", "err", serr)
			}
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
	return r.sync.storeEmptied(ctx)
}

func (r *accountAttempt) report() {
	if r.job.OnProgress != nil {
		r.job.OnProgress(r.progress)
	}
}

// refused reports whether err is the server saying no to this folder (as
// opposed to the connection failing), which fails the folder alone.
func refused(err error) bool {
	var imapErr *imap.Error
	return errors.As(err, &imapErr) && imapconn.Classify(err) == imapconn.KindPermanent
}
