package sieve

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// tokenKind tells the parts of a response line (RFC 5804 §4) apart.
type tokenKind int

const (
	tokenAtom   tokenKind = iota // OK, NO, BYE, ACTIVE, a capability name
	tokenString                  // quoted or literal: names, scripts, words
	tokenCode                    // a response code, without its parentheses
)

type token struct {
	kind tokenKind
	text string
}

// maxLine bounds the bytes of a line outside literals.
const maxLine = 64 << 10

var errLineTooLong = errors.New("the ManageSieve server sent a line too long")

// readTokens reads one response line: atoms, strings (quoted, or literals
// of {n} or {n+} then CRLF and n octets) and a response code in
// parentheses, up to the CRLF that ends it.
func readTokens(r *bufio.Reader) ([]token, error) {
	var line []token
	read := 0
	for {
		b, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		if read++; read > maxLine {
			return nil, errLineTooLong
		}
		switch {
		case b == '\r':
			if b, err = r.ReadByte(); err != nil {
				return nil, err
			}
			if b != '\n' {
				return nil, fmt.Errorf("a CR without LF in the ManageSieve server's line")
			}
			return line, nil
		case b == '\n': // a bare LF ends a line too: be lenient in what is read
			return line, nil
		case b == ' ':
		case b == '"':
			s, err := readQuoted(r)
			if err != nil {
				return nil, err
			}
			line = append(line, token{tokenString, s})
		case b == '{':
			s, err := readLiteral(r)
			if err != nil {
				return nil, err
			}
			line = append(line, token{tokenString, s})
		case b == '(':
			s, err := readCode(r)
			if err != nil {
				return nil, err
			}
			line = append(line, token{tokenCode, s})
		default:
			atom := []byte{b}
			for {
				next, err := r.Peek(1)
				if err != nil || next[0] == ' ' || next[0] == '\r' || next[0] == '\n' || len(atom) > maxLine {
					break
				}
				atom = append(atom, next[0])
				r.ReadByte()
			}
			line = append(line, token{tokenAtom, string(atom)})
		}
	}
}

// readQuoted reads a quoted string after its opening quote.
func readQuoted(r *bufio.Reader) (string, error) {
	var s strings.Builder
	for {
		b, err := r.ReadByte()
		if err != nil {
			return "", err
		}
		switch b {
		case '"':
			return s.String(), nil
		case '\\':
			if b, err = r.ReadByte(); err != nil {
				return "", err
			}
		case '\r', '\n':
			return "", errors.New("a line break inside a quoted string from the ManageSieve server")
		}
		if s.Len() >= maxLine {
			return "", errLineTooLong
		}
		s.WriteByte(b)
	}
}

// readLiteral reads a literal after its opening brace: its length, "}"
// (after an optional "+"), CRLF, then that many octets.
func readLiteral(r *bufio.Reader) (string, error) {
	head, err := r.ReadString('}')
	if err != nil {
		return "", err
	}
	digits := strings.TrimSuffix(strings.TrimSuffix(head, "}"), "+")
	n, err := strconv.Atoi(digits)
	if err != nil || n < 0 || len(digits) > 9 {
		return "", fmt.Errorf("a literal of bad length %q from the ManageSieve server", digits)
	}
	if n > maxLiteral {
		return "", fmt.Errorf("a literal of %d bytes from the ManageSieve server is more than %d", n, maxLiteral)
	}
	crlf := make([]byte, 2)
	if _, err := io.ReadFull(r, crlf); err != nil {
		return "", err
	}
	if string(crlf) != "\r\n" {
		return "", errors.New("a literal's length not followed by CRLF from the ManageSieve server")
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return "", err
	}
	return string(body), nil
}

// readCode reads a response code after its opening parenthesis, up to the
// closing one, quoted strings within kept as they were sent; it returns
// the code's first word (QUOTA/MAXSIZE, NONEXISTENT, SASL, ...).
func readCode(r *bufio.Reader) (string, error) {
	var s strings.Builder
	inQuotes := false
	for {
		b, err := r.ReadByte()
		if err != nil {
			return "", err
		}
		switch {
		case b == '\r' || b == '\n':
			return "", errors.New("a line break inside a response code from the ManageSieve server")
		case b == '"':
			inQuotes = !inQuotes
		case b == '\\' && inQuotes:
			s.WriteByte(b)
			if b, err = r.ReadByte(); err != nil {
				return "", err
			}
		case b == ')' && !inQuotes:
			word, _, _ := strings.Cut(s.String(), " ")
			return asciiUpper(word), nil
		}
		if s.Len() >= maxLine {
			return "", errLineTooLong
		}
		s.WriteByte(b)
	}
}

func encode64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func decode64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("a SASL challenge that is not base64: %w", err)
	}
	return b, nil
}

// asciiUpper upper-cases the ASCII letters of a response code, and
// leaves every other byte as it came (strings.ToUpper would turn a
// stray invalid byte into three).
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}
