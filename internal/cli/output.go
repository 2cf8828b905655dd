package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// printJSON writes v as indented JSON, for scripts (--output json).
func (s *session) printJSON(v any) error {
	enc := json.NewEncoder(s.sys.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printTable writes rows under a header, in aligned columns.
func (s *session) printTable(header []string, rows [][]string) error {
	w := tabwriter.NewWriter(s.sys.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(header, "\t"))
	for _, row := range rows {
		fmt.Fprintln(w, strings.Join(cleanCells(row), "\t"))
	}
	return w.Flush()
}

// printFields writes one record as "name  value" lines.
func (s *session) printFields(fields [][2]string) error {
	w := tabwriter.NewWriter(s.sys.Stdout, 0, 0, 2, ' ', 0)
	for _, f := range fields {
		fmt.Fprintf(w, "%s:\t%s\n", f[0], cleanCell(f[1]))
	}
	return w.Flush()
}

// printOutput writes v as JSON, or else as what table prints.
func (s *session) printOutput(v any, table func() error) error {
	if s.output == "json" {
		return s.printJSON(v)
	}
	return table()
}

// printCreated writes a new resource's id: alone on a line, so that a
// script can take it with $(…), or as {"id": n}.
func (s *session) printCreated(id int64) error {
	if s.output == "json" {
		return s.printJSON(map[string]int64{"id": id})
	}
	_, err := fmt.Fprintln(s.sys.Stdout, id)
	return err
}

// cleanCells keeps tabs and line ends in server text (an error message,
// a login) from breaking the columns.
func cleanCells(row []string) []string {
	out := make([]string, len(row))
	for i, cell := range row {
		out[i] = cleanCell(cell)
	}
	return out
}

func cleanCell(cell string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return ' '
		}
		return r
	}, cell)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// megabytes formats a byte count as MB with one decimal.
func megabytes(n int64) string { return fmt.Sprintf("%.1f", float64(n)/1e6) }

func timeOrDash(t *time.Time) string { return timeOr(t, "-") }

// timeOr is t in local time, or none when it is absent.
func timeOr(t *time.Time, none string) string {
	if t == nil {
		return none
	}
	return t.Local().Format(time.DateTime)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
