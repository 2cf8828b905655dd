// Package secret seals mailbox passwords for storage with AES-256-GCM
// (standard library only). Each value gets a fresh random nonce and is
// bound to a label naming its place (associated data), so that a sealed
// value copied to another row or column fails to open.
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// KeySize is the length of a key: AES-256.
const KeySize = 32

// ErrOpen means a sealed value did not open: wrong key, wrong label, or
// damaged data. It never says which, and never yields garbage.
var ErrOpen = errors.New("secret: sealed value does not open with this key and label")

// Box seals and opens values with one key.
type Box struct {
	aead cipher.AEAD
}

// NewBox returns a Box for a KeySize-byte key.
func NewBox(key []byte) (*Box, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("secret: key must be %d bytes, got %d", KeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal encrypts plaintext bound to label; the result is nonce || ciphertext.
func (b *Box) Seal(plaintext []byte, label string) []byte {
	nonce := make([]byte, b.aead.NonceSize(), b.aead.NonceSize()+len(plaintext)+b.aead.Overhead())
	rand.Read(nonce) // never fails (crypto/rand, Go 1.24+)
	return b.aead.Seal(nonce, nonce, plaintext, []byte(label))
}

// Open decrypts a value that Seal made with the same key and label.
func (b *Box) Open(sealed []byte, label string) ([]byte, error) {
	n := b.aead.NonceSize()
	if len(sealed) < n+b.aead.Overhead() {
		return nil, ErrOpen
	}
	plaintext, err := b.aead.Open(nil, sealed[:n], sealed[n:], []byte(label))
	if err != nil {
		return nil, ErrOpen
	}
	return plaintext, nil
}

// NewKey returns a random key.
func NewKey() []byte {
	key := make([]byte, KeySize)
	rand.Read(key)
	return key
}

// ParseKey decodes a base64 key (standard or URL alphabet, padded or not).
func ParseKey(text string) ([]byte, error) {
	text = strings.TrimSpace(text)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(text); err == nil {
			if len(key) != KeySize {
				return nil, fmt.Errorf("the key is %d bytes, want %d (base64 of 32 random bytes, e.g. from `openssl rand -base64 32`)", len(key), KeySize)
			}
			return key, nil
		}
	}
	return nil, errors.New("the key is not base64 (want 32 random bytes, e.g. from `openssl rand -base64 32`)")
}

// ReadKeyFile reads a key file written by WriteKeyFile.
func ReadKeyFile(path string) ([]byte, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	key, err := ParseKey(string(text))
	if err != nil {
		return nil, fmt.Errorf("key file %s: %w", path, err)
	}
	return key, nil
}

// WriteKeyFile stores key in a new file readable by its owner only; it
// never replaces an existing file.
func WriteKeyFile(path string, key []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	return err
}
