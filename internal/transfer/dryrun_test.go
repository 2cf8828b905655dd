package transfer

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailmigrate/mailmigrate/internal/imaptest"
	"github.com/mailmigrate/mailmigrate/internal/transfer/provider"
)

// TestPlanFindsWhatStandsInTheWay: on Dovecot servers, a plan of an
// account finds a quota the copy would overrun, two source folders that
// would become one destination folder, a name the destination's provider
// refuses, and a message larger than the destination takes; it counts
// every folder and what the destination holds already, and changes
// neither server.
func TestPlanFindsWhatStandsInTheWay(t *testing.T) {
	t.Parallel()
	src := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutSlash, Users: map[string]string{"alice": "pw"}})
	dst := imaptest.StartDovecot(t, imaptest.Options{Layout: imaptest.LayoutDotInbox, Users: map[string]string{"alice": "pw"}, QuotaBytes: 40 << 10})
	date := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	message := func(folder string, n, pad int) imaptest.Message {
		return imaptest.Message{Folder: folder, Date: date, Body: []byte(fmt.Sprintf(
			"From: a@example.org\r\nSubject: %s %d\r\nMessage-ID: <%s.%d@example.org>\r\n\r\n%s\r\n", folder, n, strings.ReplaceAll(folder, "/", "."), n, strings.Repeat("x", pad)))}
	}
	var corpus imaptest.Corpus
	for i := range 4 {
		corpus.Messages = append(corpus.Messages, message("INBOX", i, 5_000))
	}
	// On a destination whose delimiter is ".", both become Q1_2024.
	corpus.Messages = append(corpus.Messages, message("Q1.2024", 1, 100), message("Q1_2024", 1, 100))
	// Microsoft 365 keeps "Files" for itself.
	corpus.Messages = append(corpus.Messages, message("Files", 1, 100))
	corpus.Messages = append(corpus.Messages, message("Archive", 1, 30_000)) // over the size limit below
	corpus.Messages = append(corpus.Messages, message("Junk", 1, 100))       // left out by the options
	src.Load(t, "alice", corpus)
	dst.Load(t, "alice", imaptest.Corpus{Messages: []imaptest.Message{message("INBOX", 99, 100)}})
	before, beforeDst := src.Read(t, "alice"), dst.Read(t, "alice")

	destination := dovecotSide(dst, "alice", "pw")
	destination.Profile = provider.ProfileMicrosoft365
	destination.Limits.MaxMessageBytes = 20_000
	plan, err := Plan(t.Context(), Job{Source: dovecotSide(src, "alice", "pw"), Destination: destination,
		Options: Options{ExcludeFolders: []*regexp.Regexp{regexp.MustCompile("^Junk$")}}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(plan.Excluded, "Junk") {
		t.Errorf("excluded %v, want Junk", plan.Excluded)
	}
	if plan.SourceMessages != len(corpus.Messages)-1 || plan.SourceBytes < 50_000 || plan.ToCopyBytes != plan.SourceBytes {
		t.Errorf("plan counts %d messages, %d bytes (%d to copy), want the %d messages, all to copy", plan.SourceMessages, plan.SourceBytes, plan.ToCopyBytes, len(corpus.Messages))
	}
	if plan.DestinationMessages != 1 {
		t.Errorf("the destination holds %d messages in the planned folders, want the 1 in its INBOX", plan.DestinationMessages)
	}
	if plan.QuotaFree <= 0 || plan.QuotaFree > 40<<10 {
		t.Errorf("quota free %d, want under the 40 KB quota", plan.QuotaFree)
	}
	if !strings.Contains(strings.Join(plan.DestinationCapabilities, " "), "QUOTA") || !strings.Contains(strings.Join(plan.SourceCapabilities, " "), "UIDPLUS") {
		t.Errorf("capabilities: source %v, destination %v", plan.SourceCapabilities, plan.DestinationCapabilities)
	}
	folders := map[string]PlannedFolder{}
	for _, f := range plan.Folders {
		folders[f.Source] = f
	}
	// Q1_2024 keeps its name; Q1.2024, whose "." the destination cannot
	// hold, moves.
	if f := folders["Q1.2024"]; f.Moved != ProblemCollision || f.Wanted != "INBOX.Q1_2024" || f.Destination != "INBOX.Q1_2024 (2)" {
		t.Errorf("Q1.2024: %+v, want moved off INBOX.Q1_2024, which Q1_2024 takes", f)
	}
	if f := folders["Files"]; f.Moved != ProblemForbiddenName || f.Destination != "INBOX.Files (2)" {
		t.Errorf("Files: %+v, want moved to Files (2)", f)
	}
	if f := folders["INBOX"]; f.SourceMessages != 4 || f.DestinationMessages != 1 || f.Create {
		t.Errorf("INBOX: %+v", f)
	}
	if len(plan.Oversize) != 1 || plan.Oversize[0].Folder != "Archive" || plan.SizeLimit != 20_000 {
		t.Errorf("oversize %+v (limit %d), want Archive's message", plan.Oversize, plan.SizeLimit)
	}
	kinds := map[PlanProblemKind]PlanProblem{}
	for _, p := range plan.Problems {
		kinds[p.Kind] = p
	}
	if p := kinds[ProblemQuota]; !p.Blocking || !strings.HasPrefix(p.Words, "the destination's quota leaves ") {
		t.Errorf("quota problem %+v", p)
	}
	if p := kinds[ProblemCollision]; !p.Blocking || p.Words != "Q1.2024 would become INBOX.Q1_2024 on the destination, which another folder of the plan takes; it goes to INBOX.Q1_2024 (2)" {
		t.Errorf("collision problem %+v", p)
	}
	if p := kinds[ProblemForbiddenName]; p.Blocking || p.Words != "the destination does not take the name INBOX.Files; Files goes to INBOX.Files (2)" {
		t.Errorf("forbidden name problem %+v", p)
	}
	if p := kinds[ProblemOversize]; p.Blocking || !strings.HasPrefix(p.Words, "1 message is in Archive larger than the destination takes") {
		t.Errorf("oversize problem %+v", p)
	}
	if !plan.Problems[0].Blocking {
		t.Errorf("problems %+v: the blocking ones come first", plan.Problems)
	}
	if after, afterDst := src.Read(t, "alice"), dst.Read(t, "alice"); len(after.Messages) != len(before.Messages) || len(afterDst.Messages) != len(beforeDst.Messages) {
		t.Errorf("the plan changed a server: source %d → %d, destination %d → %d messages",
			len(before.Messages), len(after.Messages), len(beforeDst.Messages), len(afterDst.Messages))
	}
	if after := dst.Read(t, "alice").Folders; len(after) != len(beforeDst.Folders) {
		t.Errorf("the plan changed the destination's folders: %v → %v", beforeDst.Folders, after)
	}
}
