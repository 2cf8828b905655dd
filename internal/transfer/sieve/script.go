package sieve

import (
	"errors"
	"fmt"
	"strings"
)

// Rename is one folder a script names that the rewrite changed.
type Rename struct {
	From, To string
}

// RewriteFolders returns script with every folder it names (the mailbox
// of fileinto, the names mailboxexists tests, RFC 5228 §4.1 and RFC 5490)
// replaced by rename's answer, and the renames made. Nothing else of the
// script changes, byte for byte: comments, strings elsewhere, layout. A
// name built from variables (RFC 5229, "${...}") is left as it is: its
// value is known only when mail arrives. A script that cannot be read as
// Sieve is returned unchanged, with the reason.
func RewriteFolders(script string, rename func(folder string) (string, bool)) (string, []Rename, error) {
	tokens, err := lexScript(script)
	if err != nil {
		return script, nil, err
	}
	var out strings.Builder
	var renames []Rename
	last := 0
	for _, t := range folderArguments(tokens) {
		if strings.Contains(t.value, "${") {
			continue
		}
		to, ok := rename(t.value)
		if !ok || to == t.value {
			continue
		}
		out.WriteString(script[last:t.start])
		out.WriteString(quote(to))
		last = t.end
		renames = append(renames, Rename{From: t.value, To: to})
	}
	if renames == nil {
		return script, nil, nil
	}
	out.WriteString(script[last:])
	return out.String(), renames, nil
}

// Folders lists the folders script names, as RewriteFolders finds them.
func Folders(script string) ([]string, error) {
	tokens, err := lexScript(script)
	if err != nil {
		return nil, err
	}
	var folders []string
	for _, t := range folderArguments(tokens) {
		folders = append(folders, t.value)
	}
	return folders, nil
}

// sieveKind tells the lexical tokens of a script apart (RFC 5228 §8.1).
type sieveKind int

const (
	sieveIdentifier sieveKind = iota
	sieveTag                  // ":copy", value without the colon
	sieveNumber
	sieveString // quoted or multi-line; value decoded
	sievePunct  // ; , [ ] { } ( )
)

// sieveToken is one token and where it lies in the script, so that a
// string can be replaced in place.
type sieveToken struct {
	kind       sieveKind
	value      string
	start, end int
}

var errUnterminated = errors.New("the script ends inside a string or comment")

// lexScript splits a script into tokens, comments and white space left out.
func lexScript(s string) ([]sieveToken, error) {
	var tokens []sieveToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '#':
			end := strings.IndexByte(s[i:], '\n')
			if end < 0 {
				return tokens, nil
			}
			i += end + 1
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, errUnterminated
			}
			i += 2 + end + 2
		case c == '"':
			value, end, err := lexQuoted(s, i)
			if err != nil {
				return nil, err
			}
			tokens = append(tokens, sieveToken{sieveString, value, i, end})
			i = end
		case c == ':':
			end := identifierEnd(s, i+1)
			if end == i+1 {
				return nil, fmt.Errorf("a lone ':' at byte %d", i)
			}
			tokens = append(tokens, sieveToken{sieveTag, strings.ToLower(s[i+1 : end]), i, end})
			i = end
		case isDigit(c):
			end := i
			for end < len(s) && isDigit(s[end]) {
				end++
			}
			if end < len(s) && strings.IndexByte("KMGkmg", s[end]) >= 0 {
				end++
			}
			tokens = append(tokens, sieveToken{sieveNumber, s[i:end], i, end})
			i = end
		case isIdentifierStart(c):
			end := identifierEnd(s, i)
			word := strings.ToLower(s[i:end])
			if word == "text" && end < len(s) && s[end] == ':' {
				value, textEnd, err := lexMultiline(s, end+1)
				if err != nil {
					return nil, err
				}
				tokens = append(tokens, sieveToken{sieveString, value, i, textEnd})
				i = textEnd
				continue
			}
			tokens = append(tokens, sieveToken{sieveIdentifier, word, i, end})
			i = end
		case strings.IndexByte(";,[]{}()", c) >= 0:
			tokens = append(tokens, sieveToken{sievePunct, string(c), i, i + 1})
			i++
		default:
			return nil, fmt.Errorf("an unexpected %q at byte %d", c, i)
		}
	}
	return tokens, nil
}

// lexQuoted reads the quoted string opening at start: a backslash takes
// the next character as it is (RFC 5228 §2.4.2).
func lexQuoted(s string, start int) (string, int, error) {
	var b strings.Builder
	for i := start + 1; i < len(s); i++ {
		switch s[i] {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			i++
			if i == len(s) {
				return "", 0, errUnterminated
			}
		}
		b.WriteByte(s[i])
	}
	return "", 0, errUnterminated
}

// lexMultiline reads a multi-line string after "text:": the rest of its
// line (white space and an optional comment), then lines up to one that is
// a lone ".", with a leading ".." standing for "." (RFC 5228 §2.4.2).
func lexMultiline(s string, i int) (string, int, error) {
	nl := strings.IndexByte(s[i:], '\n')
	if nl < 0 {
		return "", 0, errUnterminated
	}
	var b strings.Builder
	for pos := i + nl + 1; pos < len(s); {
		end := strings.IndexByte(s[pos:], '\n')
		if end < 0 {
			return "", 0, errUnterminated
		}
		line := strings.TrimSuffix(s[pos:pos+end], "\r")
		if line == "." {
			return b.String(), pos + end + 1, nil
		}
		b.WriteString(strings.TrimPrefix(line, "."))
		b.WriteString("\r\n")
		pos += end + 1
	}
	return "", 0, errUnterminated
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentifierStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func identifierEnd(s string, i int) int {
	for i < len(s) && (isIdentifierStart(s[i]) || isDigit(s[i])) {
		i++
	}
	return i
}

// tagsWithArgument are the tags of fileinto that take one argument (a
// string or a string list): imap4flags' :flags (RFC 5232), :specialuse
// (RFC 8579) and :mailboxid (RFC 9042). Its other tags (:copy, :create)
// take none.
var tagsWithArgument = map[string]bool{"flags": true, "specialuse": true, "mailboxid": true}

// folderArguments are the string tokens that name folders: the one
// positional argument of each fileinto command, and every name of a
// mailboxexists test. An identifier counts as a command only where a
// command may start, so that the word inside a header test or a
// string is never taken for one.
func folderArguments(tokens []sieveToken) []sieveToken {
	var folders []sieveToken
	for i, t := range tokens {
		if t.kind != sieveIdentifier {
			continue
		}
		switch t.value {
		case "fileinto":
			if commandStart(tokens, i) {
				if folder, ok := fileintoFolder(tokens[i+1:]); ok {
					folders = append(folders, folder)
				}
			}
		case "mailboxexists":
			folders = append(folders, stringArgument(tokens[i+1:])...)
		}
	}
	return folders
}

// commandStart reports whether the identifier at i begins a command: it
// is first, or follows the end of a command or the brace of a block.
func commandStart(tokens []sieveToken, i int) bool {
	if i == 0 {
		return true
	}
	prev := tokens[i-1]
	return prev.kind == sievePunct && (prev.value == ";" || prev.value == "{" || prev.value == "}")
}

// fileintoFolder finds fileinto's folder among its arguments, up to the
// ";" that ends it: the one string that is not a tag's argument.
func fileintoFolder(args []sieveToken) (sieveToken, bool) {
	var positional []sieveToken
	for i := 0; i < len(args); i++ {
		t := args[i]
		switch {
		case t.kind == sievePunct && t.value == ";":
			if len(positional) == 1 {
				return positional[0], true
			}
			return sieveToken{}, false
		case t.kind == sieveTag && tagsWithArgument[t.value]:
			i = skipArgument(args, i+1) - 1
		case t.kind == sieveString:
			positional = append(positional, t)
		case t.kind == sievePunct && t.value == "[":
			return sieveToken{}, false // fileinto takes one name, not a list
		}
	}
	return sieveToken{}, false
}

// skipArgument returns the index after the argument at i: one string or
// number, or a bracketed list.
func skipArgument(args []sieveToken, i int) int {
	if i >= len(args) {
		return i
	}
	if args[i].kind != sievePunct || args[i].value != "[" {
		return i + 1
	}
	for i < len(args) && (args[i].kind != sievePunct || args[i].value != "]") {
		i++
	}
	return i + 1
}

// stringArgument returns the strings of the argument that opens args: one
// string, or a bracketed list of them.
func stringArgument(args []sieveToken) []sieveToken {
	if len(args) == 0 {
		return nil
	}
	if args[0].kind == sieveString {
		return args[:1]
	}
	if args[0].kind != sievePunct || args[0].value != "[" {
		return nil
	}
	var list []sieveToken
	for _, t := range args[1:] {
		switch {
		case t.kind == sieveString:
			list = append(list, t)
		case t.kind == sievePunct && t.value == "]":
			return list
		case t.kind != sievePunct || t.value != ",":
			return nil
		}
	}
	return nil
}
