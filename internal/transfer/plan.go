package transfer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/emersion/go-imap/v2"
)

// planFolders decides, for every selectable source folder that the options
// let through, its destination, so that two source folders never land in
// one destination folder unless the folder map says so (docs/design.md#folder-plans). Claims
// are made in this order, each on the names still free:
//  1. the explicit folder map;
//  2. where the folder went in the previous attempt (previous), so that a
//     re-run never maps a folder elsewhere;
//  3. folders without a role whose name translates unchanged: a folder
//     that keeps its name never loses it to another;
//  4. folders with a role, to the destination's folder of that role;
//  5. the rest by translated name, made unique with " (2)", " (3)", …
//
// Within each step, folders go in name order: the plan does not depend on
// the order in which a server lists them.
func planFolders(src, dst []mailbox, srcNS, dstNS namespace, opts *Options, previous map[string]string, reserved []string) []folderPlan {
	p := newPlanner(dst)
	p.ns = dstNS
	for _, name := range reserved {
		p.reserved[strings.ToLower(dstNS.personal(name))] = true
	}
	var wanted []mailbox
	for _, b := range src {
		if b.Selectable && opts.wants(b.Name) {
			wanted = append(wanted, b)
		}
	}
	slices.SortFunc(wanted, func(a, b mailbox) int { return strings.Compare(a.Name, b.Name) })
	dest := map[string]string{}
	explicit := map[string]bool{}
	for _, b := range wanted {
		if name, ok := opts.FolderMap[b.Name]; ok {
			name = dstNS.personal(name)
			dest[b.Name], explicit[name] = name, true
			p.claim(name)
		}
	}
	p.claimEach(wanted, dest, func(b mailbox) string {
		if name := previous[b.Name]; name != "" && !explicit[name] {
			return name
		}
		return ""
	})
	p.claimEach(wanted, dest, func(b mailbox) string {
		name := translateName(b.Name, srcNS, dstNS)
		if b.Role == "" && b.NewName == "" && translateName(name, dstNS, srcNS) == b.Name {
			return name
		}
		return ""
	})
	p.claimEach(wanted, dest, func(b mailbox) string { return p.byRole[b.Role] })
	moved := map[string]folderPlan{} // the names wanted, and why they moved
	for _, b := range wanted {
		if _, ok := dest[b.Name]; !ok {
			name := translateName(b.Name, srcNS, dstNS)
			if b.NewName != "" {
				name = dstNS.personal(b.NewName)
			}
			free := p.unreserved(name)
			dest[b.Name] = p.claimUnique(free)
			switch {
			case free != name:
				moved[b.Name] = folderPlan{Wanted: name, Moved: ProblemForbiddenName}
			case dest[b.Name] != name:
				moved[b.Name] = folderPlan{Wanted: name, Moved: ProblemCollision}
			}
		}
	}
	plans := make([]folderPlan, 0, len(wanted))
	for _, b := range wanted {
		plan := p.plan(b, dest[b.Name], !explicit[dest[b.Name]])
		plan.Wanted, plan.Moved = moved[b.Name].Wanted, moved[b.Name].Moved
		plans = append(plans, plan)
	}
	return plans
}

// planner hands out destination names.
type planner struct {
	existing map[string]*mailbox // destination folders, and those the plan creates
	byRole   map[imap.MailboxAttr]string
	claimed  map[string]bool
	// reserved are names the destination refuses to create (its
	// profile's), in lower case: no folder is planned there, nor under
	// it, unless the folder map says so.
	reserved map[string]bool
	ns       namespace // the destination's
}

// isReserved reports whether name, or the top-level folder it is under,
// is reserved.
func (p *planner) isReserved(name string) bool {
	if len(p.reserved) == 0 {
		return false
	}
	top, _ := p.splitTop(name)
	return p.reserved[strings.ToLower(top)]
}

// splitTop splits name into its top-level folder (with the personal
// prefix) and the rest, from the delimiter on.
func (p *planner) splitTop(name string) (top, rest string) {
	rel, ok := strings.CutPrefix(name, p.ns.Prefix)
	if !ok || p.ns.Delim == 0 {
		return name, ""
	}
	if i := strings.IndexRune(rel, p.ns.Delim); i >= 0 {
		return p.ns.Prefix + rel[:i], rel[i:]
	}
	return name, ""
}

// unreserved moves a name under a reserved top-level folder to that
// folder's first free " (n)" twin: "Files/2024" goes to "Files (2)/2024",
// beside "Files" itself.
func (p *planner) unreserved(name string) string {
	if !p.isReserved(name) {
		return name
	}
	top, rest := p.splitTop(name)
	for n := 2; ; n++ {
		candidate := fmt.Sprintf("%s (%d)", top, n)
		if !p.reserved[strings.ToLower(candidate)] && (p.existing[candidate] == nil || rest != "") {
			return candidate + rest
		}
	}
}

func newPlanner(dst []mailbox) *planner {
	p := &planner{existing: map[string]*mailbox{"INBOX": {Name: "INBOX"}}, byRole: map[imap.MailboxAttr]string{}, claimed: map[string]bool{}, reserved: map[string]bool{}}
	for i, b := range dst {
		p.existing[b.Name] = &dst[i]
		if b.Role != "" && p.byRole[b.Role] == "" {
			p.byRole[b.Role] = b.Name
		}
	}
	return p
}

func (p *planner) claim(name string) { p.claimed[name] = true }

// claimEach gives each folder without a destination yet the name choose
// returns for it, if that name is still free.
func (p *planner) claimEach(wanted []mailbox, dest map[string]string, choose func(mailbox) string) {
	for _, b := range wanted {
		if _, ok := dest[b.Name]; ok {
			continue
		}
		if name := choose(b); name != "" && !p.claimed[name] && !p.isReserved(name) {
			dest[b.Name] = name
			p.claim(name)
		}
	}
}

// claimUnique claims name, or the first of "name (2)", "name (3)", … that
// is neither claimed nor an existing destination folder.
func (p *planner) claimUnique(name string) string {
	candidate := name
	for n := 2; p.claimed[candidate] || p.isReserved(candidate) || (candidate != name && p.existing[candidate] != nil); n++ {
		candidate = fmt.Sprintf("%s (%d)", name, n)
	}
	p.claim(candidate)
	return candidate
}

// plan says what to do with the destination folder name for source
// folder b; mayTakeRole lets a created folder take b's role where the
// destination has no folder of it yet.
func (p *planner) plan(b mailbox, name string, mayTakeRole bool) folderPlan {
	plan := folderPlan{Source: b, Destination: name, Subscribe: b.Subscribed}
	if there := p.existing[name]; there != nil {
		plan.Subscribe = b.Subscribed && !there.Subscribed
		plan.DestStatus = there.Status
		return plan
	}
	plan.Create = true
	p.existing[name] = &mailbox{Name: name, Subscribed: b.Subscribed}
	if mayTakeRole && b.Role != "" && p.byRole[b.Role] == "" {
		plan.CreateRole = b.Role
		p.byRole[b.Role] = name
	}
	return plan
}
