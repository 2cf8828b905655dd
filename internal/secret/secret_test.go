package secret

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func newTestBox(t *testing.T) *Box {
	t.Helper()
	box, err := NewBox(NewKey())
	if err != nil {
		t.Fatal(err)
	}
	return box
}

func TestSealOpens(t *testing.T) {
	t.Parallel()
	box := newTestBox(t)
	for _, plaintext := range []string{"", "pw", string(bytes.Repeat([]byte("x"), 4096))} {
		sealed := box.Seal([]byte(plaintext), "accounts/1/source_password")
		got, err := box.Open(sealed, "accounts/1/source_password")
		if err != nil || string(got) != plaintext {
			t.Errorf("round trip of %d bytes: %v", len(plaintext), err)
		}
	}
}

func TestOpenRefusesWhatItShould(t *testing.T) {
	t.Parallel()
	box := newTestBox(t)
	sealed := box.Seal([]byte("pw"), "label")
	tampered := bytes.Clone(sealed)
	tampered[len(tampered)-1] ^= 1
	other := newTestBox(t)
	for name, open := range map[string]func() ([]byte, error){
		"other label": func() ([]byte, error) { return box.Open(sealed, "label2") },
		"tampered":    func() ([]byte, error) { return box.Open(tampered, "label") },
		"other key":   func() ([]byte, error) { return other.Open(sealed, "label") },
		"truncated":   func() ([]byte, error) { return box.Open(sealed[:10], "label") },
		"empty":       func() ([]byte, error) { return box.Open(nil, "label") },
	} {
		if got, err := open(); !errors.Is(err, ErrOpen) || got != nil {
			t.Errorf("%s: %q %v, want ErrOpen", name, got, err)
		}
	}
}

func TestSealUsesAFreshNonce(t *testing.T) {
	t.Parallel()
	box := newTestBox(t)
	if bytes.Equal(box.Seal([]byte("pw"), "l"), box.Seal([]byte("pw"), "l")) {
		t.Error("the same value sealed twice came out the same")
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	key := NewKey()
	for _, text := range []string{
		base64.StdEncoding.EncodeToString(key),
		base64.RawStdEncoding.EncodeToString(key),
		base64.URLEncoding.EncodeToString(key) + "\n",
	} {
		got, err := ParseKey(text)
		if err != nil || !bytes.Equal(got, key) {
			t.Errorf("ParseKey(%q): %v", text, err)
		}
	}
	for _, bad := range []string{"", "!!!", base64.StdEncoding.EncodeToString(key[:16])} {
		if _, err := ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) accepted", bad)
		}
	}
	if _, err := NewBox(key[:16]); err == nil {
		t.Error("NewBox took a 16-byte key")
	}
}

func TestKeyFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "secret.key")
	key := NewKey()
	if err := WriteKeyFile(path, key); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", info.Mode().Perm())
	}
	got, err := ReadKeyFile(path)
	if err != nil || !bytes.Equal(got, key) {
		t.Errorf("read back: %v", err)
	}
	if err := WriteKeyFile(path, NewKey()); err == nil {
		t.Error("WriteKeyFile replaced an existing key")
	}
	if again, _ := ReadKeyFile(path); !bytes.Equal(again, key) {
		t.Error("the key file changed")
	}
}
