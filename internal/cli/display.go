package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/mailmigrate/mailmigrate/gen/api"
)

// display shows a follow's event log and figures.
type display interface {
	line(text string)   // a line of the event log
	notice(text string) // a problem of the CLI itself, e.g. a reconnect
	progress(b *board)  // the latest figures
	close()             // the follow is over; the summary comes next
}

// maxBars bounds the accounts a terminal shows at once.
const maxBars = 20

// ttyDisplay redraws the figures in place below the event log, with ANSI
// cursor movement: the terminal always shows the log, then an overall
// line and a bar per running account.
type ttyDisplay struct {
	out   io.Writer
	width func() int // nil: 80 columns
	drawn []string   // lines of the figures now on screen
}

func (d *ttyDisplay) line(text string) {
	d.erase()
	fmt.Fprintln(d.out, text)
	d.draw(d.drawn)
}

func (d *ttyDisplay) notice(text string) { d.line("warning: " + text) }

func (d *ttyDisplay) progress(b *board) {
	figures, pace := b.overall()
	lines := []string{figures + ", " + pace}
	running := b.running()
	for i, v := range running {
		if i == maxBars {
			lines = append(lines, fmt.Sprintf("  … and %d more running", len(running)-maxBars))
			break
		}
		lines = append(lines, "  "+v.figures(true)+"  "+v.pace(b.now))
	}
	d.erase()
	d.draw(lines)
}

func (d *ttyDisplay) close() { d.drawn = nil }

// erase moves the cursor to the first line of the figures and clears to
// the end of the screen (ESC[nF: n lines up, to column 1; ESC[J: clear).
func (d *ttyDisplay) erase() {
	if len(d.drawn) > 0 {
		fmt.Fprintf(d.out, "\x1b[%dF\x1b[J", len(d.drawn))
	}
}

// draw writes the figures, each line cut to the terminal's width so that
// none wraps: erase counts lines, not screen rows.
func (d *ttyDisplay) draw(lines []string) {
	width := 80
	if d.width != nil && d.width() > 0 {
		width = d.width()
	}
	for _, l := range lines {
		fmt.Fprintln(d.out, cutToWidth(l, width-1))
	}
	d.drawn = lines
}

func cutToWidth(line string, width int) string {
	runes := []rune(line)
	if len(runes) <= width {
		return line
	}
	return string(runes[:max(width-1, 0)]) + "…"
}

// plainDisplay writes lines for a file, a pipe or a log: the event log as
// it comes, and figures at most once per interval for each account and
// for the task, and only when they changed, so that a long pass does not
// flood the log.
type plainDisplay struct {
	out, errs io.Writer
	interval  time.Duration
	printed   map[string]printedLine // by account login, "" for the task
}

type printedLine struct {
	at      time.Time
	figures string
}

func newPlainDisplay(out, errs io.Writer, interval time.Duration) *plainDisplay {
	return &plainDisplay{out: out, errs: errs, interval: interval, printed: map[string]printedLine{}}
}

func (d *plainDisplay) line(text string)   { fmt.Fprintln(d.out, text) }
func (d *plainDisplay) notice(text string) { fmt.Fprintln(d.errs, "mailmigrate: warning:", text) }

func (d *plainDisplay) progress(b *board) {
	for _, v := range b.running() {
		if v.account.Progress == (api.Progress{}) {
			continue // just started: nothing to tell yet
		}
		d.printEvery(b.now, v.account.SourceLogin, "progress "+v.figures(false), "  "+v.pace(b.now))
	}
	figures, pace := b.overall()
	d.printEvery(b.now, "", figures, ", "+pace)
}

// printEvery prints figures and pace unless the line for key was printed
// less than an interval ago, or its figures have not changed since.
func (d *plainDisplay) printEvery(now time.Time, key, figures, pace string) {
	last, ok := d.printed[key]
	if ok && (now.Sub(last.at) < d.interval || last.figures == figures) {
		return
	}
	d.printed[key] = printedLine{at: now, figures: figures}
	fmt.Fprintln(d.out, figures+pace)
}

func (d *plainDisplay) close() {}

// silentDisplay shows nothing: with --output json only the final summary
// is written.
type silentDisplay struct{}

func (silentDisplay) line(string)     {}
func (silentDisplay) notice(string)   {}
func (silentDisplay) progress(*board) {}
func (silentDisplay) close()          {}
