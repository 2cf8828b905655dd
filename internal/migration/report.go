package migration

import (
	"context"
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"time"
)

// reportColumns head the per-account report. No secret is among them.
var reportColumns = []string{
	"account_id", "source_login", "destination_login", "state",
	"source_test", "destination_test", "folders_done", "messages_total",
	"messages_copied", "messages_skipped", "messages_failed", "bytes_copied",
	"started_at", "finished_at", "last_error",
}

// WriteTaskReport writes one CSV row per account of a task (see
// reportColumns) to w.
func (s *Service) WriteTaskReport(ctx context.Context, taskID int64, w io.Writer) error {
	page, err := s.store.AccountList(ctx, taskID, AccountQuery{Sort: AccountSort{By: OrderByID}})
	if err != nil {
		return err
	}
	out := csv.NewWriter(w)
	out.Write(reportColumns) //nolint:errcheck // Flush reports write errors
	for _, a := range page.Accounts {
		out.Write(reportRow(a)) //nolint:errcheck // Flush reports write errors
	}
	out.Flush()
	return out.Error()
}

func reportRow(a Account) []string {
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	return []string{
		n(a.ID), spreadsheetSafe(a.SourceLogin), spreadsheetSafe(a.DestinationLogin), string(a.State),
		testSummary(a.SourceTest), testSummary(a.DestinationTest),
		n(a.Progress.FoldersDone), n(a.Progress.MessagesTotal), n(a.Progress.MessagesCopied),
		n(a.Progress.MessagesSkipped), n(a.Progress.MessagesFailed), n(a.Progress.BytesCopied),
		timeText(a.StartedAt), timeText(a.FinishedAt), spreadsheetSafe(a.LastError),
	}
}

func testSummary(t *TestResult) string {
	switch {
	case t == nil:
		return ""
	case t.OK:
		return "ok"
	default:
		return spreadsheetSafe("failed: " + t.Error)
	}
}

func timeText(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// spreadsheetSafe keeps a spreadsheet from running a cell as a formula
// (OWASP, "CSV Injection"): text that starts with = + - @, a tab or a CR
// gets an apostrophe before that character. So does text after a comma,
// semicolon, tab or bar, whatever spaces or quotes follow it: a
// spreadsheet whose list separator is that character splits the cell
// there, and a cell such as "x;=1+1" would end in a formula.
func spreadsheetSafe(s string) string {
	var b strings.Builder
	cellStart := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if cellStart {
			switch c {
			case ' ', '"':
				b.WriteByte(c) // trimmed or unquoted before a formula is read
				continue
			case '=', '+', '-', '@', '\t', '\r':
				b.WriteByte('\'')
			}
			cellStart = false
		}
		b.WriteByte(c)
		switch c {
		case ',', ';', '\t', '|':
			cellStart = true
		}
	}
	return b.String()
}
