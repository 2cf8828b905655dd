package httpapi

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// invalidUTF8Field finds the first string of a JSON body that is not
// valid UTF-8 as sent (bytes that are not UTF-8, overlong forms, or a \u
// escape of a lone surrogate) and names its field, e.g.
// "options.exclude_folders". encoding/json would decode such a string
// into U+FFFD silently, storing something the client never sent. The body
// is known to be well-formed JSON.
func invalidUTF8Field(body []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	var levels jsonLevels
	for {
		start := dec.InputOffset()
		token, err := dec.Token()
		if err != nil {
			return "", false // the end, or malformed: the decoder says so later
		}
		switch t := token.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				levels = append(levels, jsonLevel{object: t == '{', wantsKey: t == '{'})
			case '}', ']':
				levels = levels[:len(levels)-1]
				levels.valueDone()
			}
		case string:
			isKey := levels.wantKey()
			if isKey {
				levels[len(levels)-1].key, levels[len(levels)-1].wantsKey = t, false
			}
			if !validJSONString(body[start:dec.InputOffset()]) {
				if isKey {
					levels[len(levels)-1].key = "" // name the object that holds it
				}
				return levels.path(), true
			}
			if !isKey {
				levels.valueDone()
			}
		default:
			levels.valueDone()
		}
	}
}

// jsonLevels are the objects and arrays open at a point of a JSON text,
// outermost first.
type jsonLevels []jsonLevel

type jsonLevel struct {
	object   bool
	key      string // an object's key last read
	wantsKey bool   // an object's next string is a key
	index    int    // an array's element being read
}

// wantKey reports whether the next string is an object's key.
func (ls jsonLevels) wantKey() bool {
	return len(ls) > 0 && ls[len(ls)-1].object && ls[len(ls)-1].wantsKey
}

// valueDone moves the innermost level past the value just read.
func (ls jsonLevels) valueDone() {
	if n := len(ls); n > 0 {
		if ls[n-1].object {
			ls[n-1].wantsKey = true
		} else {
			ls[n-1].index++
		}
	}
}

// path names the field being read, e.g. "options.exclude_folders[2]";
// "body" for the body itself.
func (ls jsonLevels) path() string {
	var b strings.Builder
	for _, l := range ls {
		if !l.object {
			b.WriteString("[" + strconv.Itoa(l.index) + "]")
			continue
		}
		if !isFieldName(l.key) {
			break // a map's key, such as a folder name: the map is the field
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(l.key)
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}

// isFieldName reports whether key is one of the API's own field names
// (lower case, digits, underscores) rather than a key chosen by a client.
func isFieldName(key string) bool {
	if key == "" {
		return false
	}
	for _, r := range key {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '_' {
			return false
		}
	}
	return true
}

// validJSONString reports whether the raw JSON text holding one string
// literal (with any separator before it) is valid UTF-8 and escapes no
// lone surrogate.
func validJSONString(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++
		if i >= len(raw) || raw[i] != 'u' {
			continue // a one-letter escape, skipped with its backslash
		}
		r, ok := hexRune(raw, i+1)
		i += 4
		if !ok || !utf16.IsSurrogate(r) {
			continue
		}
		// A high surrogate must be followed by an escaped low one.
		if r >= 0xdc00 || i+6 >= len(raw) || raw[i+1] != '\\' || raw[i+2] != 'u' {
			return false
		}
		low, ok := hexRune(raw, i+3)
		if !ok || low < 0xdc00 || low > 0xdfff {
			return false
		}
		i += 6
	}
	return true
}

// hexRune reads the four hex digits at raw[i:].
func hexRune(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(raw[i:i+4]), 16, 32)
	return rune(n), err == nil
}
