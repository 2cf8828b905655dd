package migration

import (
	"context"
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// reportColumns head the per-account report. No secret is among them.
// New columns go at the end, so that scripts reading by position go on
// working; after them come the columns of each pass (passColumns).
var reportColumns = []string{
	"account_id", "source_login", "destination_login", "state",
	"source_test", "destination_test", "folders_done", "messages_total",
	"messages_copied", "messages_skipped", "messages_failed", "bytes_copied",
	"started_at", "finished_at", "last_error",
	"source_messages", "source_bytes", "duration_seconds",
	"sieve_scripts", "altered_copies",
}

// passColumns are the columns of pass N: what it did for the account.
func passColumns(n int) []string {
	p := "pass_" + strconv.Itoa(n) + "_"
	return []string{p + "state", p + "messages_copied", p + "messages_skipped", p + "messages_failed", p + "bytes_copied", p + "duration_seconds"}
}

// WriteTaskReport writes one CSV row per account of a task (see
// reportColumns) to w, with the columns of each of the task's passes.
func (s *Service) WriteTaskReport(ctx context.Context, taskID int64, w io.Writer) error {
	page, err := s.store.AccountList(ctx, taskID, AccountQuery{Sort: AccountSort{By: OrderByID}})
	if err != nil {
		return err
	}
	passes, err := s.store.TaskPasses(ctx, taskID)
	if err != nil {
		return err
	}
	byAccount, err := s.store.TaskAccountPasses(ctx, taskID)
	if err != nil {
		return err
	}
	altered, err := s.store.TaskAlteredCopies(ctx, taskID)
	if err != nil {
		return err
	}
	header := slices.Clone(reportColumns)
	for _, p := range passes {
		header = append(header, passColumns(p.Number)...)
	}
	out := csv.NewWriter(w)
	out.Write(header) //nolint:errcheck // Flush reports write errors
	for _, a := range page.Accounts {
		row := reportRow(a, altered[a.ID])
		for _, p := range passes {
			row = append(row, passCells(byAccount[a.ID], p.Number)...)
		}
		out.Write(row) //nolint:errcheck // Flush reports write errors
	}
	out.Flush()
	return out.Error()
}

// reportRow is the account's row before the passes' columns; altered
// counts the copies its folders hold unlike their source message.
func reportRow(a Account, altered int64) []string {
	n := func(v int64) string { return strconv.FormatInt(v, 10) }
	source := []string{"", ""}
	if a.Progress.SourceCounted {
		source = []string{n(a.Progress.SourceMessages), n(a.Progress.SourceBytes)}
	}
	return append([]string{
		n(a.ID), spreadsheetSafe(a.SourceLogin), spreadsheetSafe(a.DestinationLogin), string(a.State),
		testSummary(a.SourceTest), testSummary(a.DestinationTest),
		n(a.Progress.FoldersDone), n(a.Progress.MessagesTotal), n(a.Progress.MessagesCopied),
		n(a.Progress.MessagesSkipped), n(a.Progress.MessagesFailed), n(a.Progress.BytesCopied),
		timeText(a.StartedAt), timeText(a.FinishedAt), spreadsheetSafe(a.LastError),
	}, append(source, durationText(a.StartedAt, a.FinishedAt), scriptsText(a.Scripts), n(altered))...)
}

// scriptsText is the report's cell of an account's Sieve scripts: empty
// when they were never moved.
func scriptsText(s *ScriptsEnd) string {
	if s == nil {
		return ""
	}
	return spreadsheetSafe(s.Summary())
}

// passCells are the account's cells of pass n, empty where it did not
// run in it.
func passCells(passes []AccountPass, n int) []string {
	for _, p := range passes {
		if p.Pass == n {
			f := p.Figures
			return []string{string(p.State), strconv.FormatInt(f.MessagesCopied, 10), strconv.FormatInt(f.MessagesSkipped, 10),
				strconv.FormatInt(f.MessagesFailed, 10), strconv.FormatInt(f.BytesCopied, 10), durationText(p.StartedAt, &p.FinishedAt)}
		}
	}
	return make([]string, len(passColumns(n)))
}

// durationText is the whole seconds from start to end, empty without both.
func durationText(start, end *time.Time) string {
	if start == nil || end == nil {
		return ""
	}
	return strconv.FormatInt(int64(end.Sub(*start).Round(time.Second)/time.Second), 10)
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
