package transfer

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"

	"github.com/mailmigrate/mailmigrate/internal/transfer/imapconn"
)

// PlanCapabilities are the capabilities a plan reports for each side: those
// that change how the copy goes (docs/design.md#plans).
var PlanCapabilities = []imap.Cap{"UIDPLUS", "MULTIAPPEND", "LITERAL+", "CONDSTORE", "QRESYNC", "SPECIAL-USE", "APPENDLIMIT", "QUOTA", "COMPRESS=DEFLATE"}

// AccountPlan is what an attempt on an account would do, read from both servers
// without changing either: the source is only examined, and the
// destination is listed and asked its quota, nothing created.
type AccountPlan struct {
	// SourceCapabilities and DestinationCapabilities are those of
	// PlanCapabilities each side announces after login (APPENDLIMIT with
	// its value).
	SourceCapabilities, DestinationCapabilities []string
	Folders                                     []PlannedFolder
	// Excluded are the source folders the task's include and exclude
	// patterns leave out.
	Excluded []string
	// SourceMessages and SourceBytes are the planned folders' sizes;
	// ToCopyBytes is the part not copied by an earlier attempt (all of it
	// before the first).
	SourceMessages int
	SourceBytes    int64
	ToCopyBytes    int64
	// DestinationMessages are the messages already in the destination
	// folders the plan writes to.
	DestinationMessages int
	// QuotaFree is what the destination's storage quota leaves, in bytes;
	// -1 when it announces none.
	QuotaFree int64
	// SizeLimit is the largest message the destination takes; 0: none
	// known. Oversize are the source messages larger than that.
	SizeLimit int64
	Oversize  []OversizeMessage
	// Scripts is what an attempt would do with the account's Sieve scripts:
	// Copied would be put, Refused are those the destination's
	// CHECKSCRIPT refuses; nil when the source names no ManageSieve.
	Scripts  *ScriptsResult
	Problems []PlanProblem
}

// PlannedFolder is one source folder in the plan.
type PlannedFolder struct {
	Source, Destination string
	Role                string // the source folder's SPECIAL-USE role, e.g. \Sent; empty without
	Create              bool   // the destination lacks the folder: the attempt creates it
	// Wanted is the destination name the folder would have had, where a
	// collision or a name the destination refuses moved it.
	Wanted string
	// Moved says why it is not Wanted: ProblemCollision or
	// ProblemForbiddenName; empty when it kept its name.
	Moved               PlanProblemKind
	SourceMessages      int
	SourceBytes         int64
	DestinationMessages int
	ToCopyBytes         int64
	OversizeMessages    int
	// PreviousDestination is where an earlier attempt put the folder; empty
	// before the first.
	PreviousDestination string
}

// OversizeMessage is a source message larger than the destination takes.
type OversizeMessage struct {
	Folder string
	UID    uint32
	Size   int64
}

// PlanProblemKind names what a plan found in the way.
type PlanProblemKind string

// The kinds of plan problem. Quota and collision block an account where
// the task refuses blocked accounts; the others are warnings.
const (
	ProblemQuota         PlanProblemKind = "quota"
	ProblemCollision     PlanProblemKind = "collision"
	ProblemForbiddenName PlanProblemKind = "forbidden_name"
	ProblemOversize      PlanProblemKind = "oversize"
	ProblemCapability    PlanProblemKind = "capability"
	// ProblemSieveScript: a Sieve script the destination would refuse
	// (its CHECKSCRIPT's words), or scripts that cannot move at all.
	ProblemSieveScript PlanProblemKind = "sieve_script"
)

// PlanProblem is one thing a plan found, in words.
type PlanProblem struct {
	Kind     PlanProblemKind
	Blocking bool
	Folder   string // the source folder it is about, or empty
	Words    string
}

// maxOversizeListed bounds the oversize messages a plan lists; it counts
// them all.
const maxOversizeListed = 50

// Plan reads what an attempt of job would do, without copying anything: both
// sides' capabilities, the folder plan the attempt would make (the same
// planner, with where earlier attempts put each folder), each folder's
// messages and bytes and what the destination has already, the
// destination's quota against what is left to copy, and the messages
// larger than the destination takes.
func Plan(ctx context.Context, job Job) (AccountPlan, error) {
	r, err := newAccountAttempt(ctx, job)
	if err != nil {
		return AccountPlan{}, err
	}
	src, dst, err := openBoth(ctx, r.job)
	if err != nil {
		return AccountPlan{}, err
	}
	defer src.session.Close()
	defer dst.session.Close()
	r.beginTry(src, dst)
	boxes := sourceModelOf(src.session.Caps(), &r.job.Options).folders(src.boxes)
	plans := planFolders(boxes, dst.boxes, src.ns, dst.ns, &r.job.Options, r.sync.previousDestinations(), r.reservedNames())

	p := AccountPlan{
		SourceCapabilities:      planCapabilities(src.session.Caps()),
		DestinationCapabilities: planCapabilities(dst.session.Caps()),
		QuotaFree:               -1,
	}
	for _, b := range boxes {
		if b.Selectable && !r.job.Options.wants(b.Name) {
			p.Excluded = append(p.Excluded, b.Name)
		}
	}
	announced := map[imap.Cap]bool{}
	for c := range dst.session.Caps() {
		announced[c] = true
	}
	p.SizeLimit, _ = r.sizeLimit(imapconn.AppendLimit(announced))
	counts, oversize, err := r.sourceSizes(ctx, src, plans, p.SizeLimit)
	if err != nil {
		return AccountPlan{}, err
	}
	for _, plan := range plans {
		f, err := r.plannedFolder(plan, counts[plan.Source.Name], dst.session)
		if err != nil {
			return AccountPlan{}, err
		}
		p.add(f, oversize[plan.Source.Name])
	}
	if dst.session.Caps().Has(imap.CapQuota) {
		free, err := quotaFree(dst.session)
		if err != nil {
			return AccountPlan{}, err
		}
		p.QuotaFree = free
	}
	p.Problems = planProblems(p, dst.session.Caps())
	if p.Scripts = r.planScripts(ctx, plans, src.ns, dst.ns); p.Scripts != nil {
		p.Problems = append(p.Problems, scriptProblems(*p.Scripts)...)
	}
	return p, nil
}

// sourceSizes counts each planned source folder's messages and bytes and,
// under a size limit, finds those larger than it, by folder.
func (r *accountAttempt) sourceSizes(ctx context.Context, src openedSide, plans []folderPlan, sizeLimit int64) (map[string]SourceCount, map[string][]OversizeMessage, error) {
	var countable []mailbox
	oversize := map[string][]OversizeMessage{}
	var routed map[string]SourceCount // of a Gmail source: what each folder read from All Mail gets
	for _, plan := range plans {
		if plan.Source.Reads != "" {
			if routed == nil {
				// The attempt's own routing of All Mail's messages, with
				// their sizes: the folders' counts, and those too large.
				labels, err := r.buildLabelIndex(ctx, src.boxes, plans, sizeLimit)
				if err != nil {
					return nil, nil, err
				}
				routed = labels.counts
				maps.Copy(oversize, labels.oversize)
			}
			continue
		}
		box := plan.Source
		if sizeLimit > 0 {
			// One FETCH of the sizes both finds the messages too large
			// and counts the folder, which countFolders then takes as is.
			sized, big, err := sizeFolder(src.session, box.Name, sizeLimit)
			if err != nil {
				return nil, nil, err
			}
			if sized != nil {
				box.Status, oversize[box.Name] = sized, big
			}
		}
		countable = append(countable, box)
	}
	_, counts, err := countFolders(src.session, countable, r.logger)
	if err != nil {
		return nil, nil, err
	}
	maps.Copy(counts, routed)
	return counts, oversize, nil
}

// plannedFolder is what the plan says of one folder, counted at count:
// what is left to copy since an earlier attempt, and what the
// destination's folder holds already.
func (r *accountAttempt) plannedFolder(plan folderPlan, count SourceCount, dst *session) (PlannedFolder, error) {
	f := PlannedFolder{Source: plan.Source.Name, Destination: plan.Destination, Role: string(plan.Source.Role),
		Create: plan.Create, Wanted: plan.Wanted, Moved: plan.Moved}
	f.SourceMessages, f.SourceBytes, f.ToCopyBytes = count.Messages, count.Bytes, count.Bytes
	if prev, ok := r.sync.ours(plan.Source.Name); ok {
		f.PreviousDestination = prev.Destination
		f.ToCopyBytes = max(0, count.Bytes-prev.SourceBytes)
	}
	if !plan.Create {
		n, err := destinationCount(dst, plan)
		if err != nil {
			return PlannedFolder{}, err
		}
		f.DestinationMessages = n
	}
	return f, nil
}

// add puts f in the plan with its messages too large (big), listed while
// the plan lists fewer than maxOversizeListed, and adds up its figures.
func (p *AccountPlan) add(f PlannedFolder, big []OversizeMessage) {
	f.OversizeMessages = len(big)
	p.Oversize = append(p.Oversize, big[:min(len(big), maxOversizeListed-len(p.Oversize))]...)
	p.Folders = append(p.Folders, f)
	p.SourceMessages += f.SourceMessages
	p.SourceBytes += f.SourceBytes
	p.ToCopyBytes += f.ToCopyBytes
	p.DestinationMessages += f.DestinationMessages
}

// planCapabilities are the PlanCapabilities in caps, in their order.
func planCapabilities(caps imap.CapSet) []string {
	var out []string
	for _, c := range PlanCapabilities {
		if c == "APPENDLIMIT" {
			for announced := range caps {
				if strings.HasPrefix(string(announced), "APPENDLIMIT") {
					out = append(out, string(announced))
				}
			}
			continue
		}
		if caps.Has(c) {
			out = append(out, string(c))
		}
	}
	return out
}

// destinationCount is how many messages an existing destination folder
// holds: from its LIST-STATUS, else STATUS; 0 if the server will not say.
func destinationCount(dst *session, plan folderPlan) (int, error) {
	if plan.DestStatus != nil && plan.DestStatus.NumMessages != nil {
		return int(*plan.DestStatus.NumMessages), nil
	}
	data, err := dst.Status(plan.Destination, &imap.StatusOptions{NumMessages: true}).Wait()
	if err != nil {
		if refused(err) {
			return 0, nil
		}
		return 0, dst.Failed(err)
	}
	if data.NumMessages == nil {
		return 0, nil
	}
	return int(*data.NumMessages), nil
}

// sizeFolder examines a source folder read-only and fetches its messages'
// sizes: its count and bytes as a STATUS would give them, and the
// messages larger than limit. A folder the server will not open has no
// status (nil).
func sizeFolder(src *session, folder string, limit int64) (*imap.StatusData, []OversizeMessage, error) {
	selected, err := src.Select(folder, &imap.SelectOptions{ReadOnly: true}).Wait()
	if err != nil {
		if refused(err) {
			return nil, nil, nil
		}
		return nil, nil, src.Failed(err)
	}
	count, bytes := selected.NumMessages, int64(0)
	var big []OversizeMessage
	if count > 0 {
		var seqs imap.SeqSet
		seqs.AddRange(1, 0) // 1:*
		msgs, err := src.Fetch(seqs, &imap.FetchOptions{UID: true, RFC822Size: true}).Collect()
		if err != nil {
			return nil, nil, src.Failed(err)
		}
		count = uint32(len(msgs))
		for _, m := range msgs {
			bytes += m.RFC822Size
			if m.RFC822Size > limit {
				big = append(big, OversizeMessage{Folder: folder, UID: uint32(m.UID), Size: m.RFC822Size})
			}
		}
	}
	return &imap.StatusData{Mailbox: folder, NumMessages: &count, Size: &bytes}, big, nil
}

// quotaFree is what the quota of the destination's INBOX leaves of its
// STORAGE (RFC 9208 counts it in units of 1024 bytes); -1 without a
// storage limit.
func quotaFree(dst *session) (int64, error) {
	quotas, err := dst.GetQuotaRoot("INBOX").Wait()
	if err != nil {
		if refused(err) {
			return -1, nil
		}
		return 0, dst.Failed(err)
	}
	free := int64(-1)
	for _, q := range quotas {
		if storage, ok := q.Resources[imap.QuotaResourceStorage]; ok && storage.Limit > 0 {
			left := max(0, storage.Limit-storage.Usage) * 1024
			if free < 0 || left < free {
				free = left
			}
		}
	}
	return free, nil
}

// planProblems says what stands in the way of the plan.
func planProblems(p AccountPlan, dstCaps imap.CapSet) []PlanProblem {
	var problems []PlanProblem
	if p.QuotaFree >= 0 && p.ToCopyBytes > p.QuotaFree {
		problems = append(problems, PlanProblem{Kind: ProblemQuota, Blocking: true,
			Words: fmt.Sprintf("the destination's quota leaves %s free, and %s are to be copied", byteWords(p.QuotaFree), byteWords(p.ToCopyBytes))})
	}
	for _, f := range p.Folders {
		switch f.Moved {
		case ProblemCollision:
			problems = append(problems, PlanProblem{Kind: ProblemCollision, Blocking: true, Folder: f.Source,
				Words: fmt.Sprintf("%s would become %s on the destination, which another folder of the plan takes; it goes to %s", f.Source, f.Wanted, f.Destination)})
		case ProblemForbiddenName:
			problems = append(problems, PlanProblem{Kind: ProblemForbiddenName, Folder: f.Source,
				Words: fmt.Sprintf("the destination does not take the name %s; %s goes to %s", f.Wanted, f.Source, f.Destination)})
		}
		if f.OversizeMessages > 0 {
			problems = append(problems, PlanProblem{Kind: ProblemOversize, Folder: f.Source,
				Words: fmt.Sprintf("%d %s in %s larger than the destination takes (%s): they stay on the source",
					f.OversizeMessages, pluralWord(f.OversizeMessages, "message is", "messages are"), f.Source, byteWords(p.SizeLimit))})
		}
	}
	if !dstCaps.Has(imap.CapUIDPlus) && !dstCaps.Has(imap.CapIMAP4rev2) {
		problems = append(problems, PlanProblem{Kind: ProblemCapability,
			Words: "the destination has no UIDPLUS: each copy is found again by its Message-ID, which is slower"})
	}
	slices.SortStableFunc(problems, func(a, b PlanProblem) int {
		switch {
		case a.Blocking == b.Blocking:
			return 0
		case a.Blocking:
			return -1
		}
		return 1
	})
	return problems
}

func byteWords(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
