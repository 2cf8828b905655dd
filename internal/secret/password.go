package secret

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/crypto/argon2"
)

// People's passwords are kept as an Argon2id digest (RFC 9106) in the
// PHC string format, "$argon2id$v=19$m=19456,t=2,p=1$<salt>$<key>", with
// OWASP's least parameters for Argon2id: 19 MiB of memory, two passes,
// one lane. The parameters travel in the string, so that stronger ones
// later still check the digests made before.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyBytes  = 32
	argonSaltBytes = 16
)

// kdfSlots bound the digests made at once: each takes argonMemoryKiB, so
// a flood of sign-ins waits its turn rather than take the machine's
// memory (100 at once would want 1.9 GiB).
var kdfSlots = make(chan struct{}, max(2, runtime.GOMAXPROCS(0)))

// idKey is argon2.IDKey within kdfSlots.
func idKey(password, salt []byte, passes, memory uint32, threads uint8, keyBytes uint32) []byte {
	kdfSlots <- struct{}{}
	defer func() { <-kdfSlots }()
	return argon2.IDKey(password, salt, passes, memory, threads, keyBytes)
}

// HashPassword is password's digest, with a random salt.
func HashPassword(password string) string {
	salt := make([]byte, argonSaltBytes)
	rand.Read(salt) // never fails (crypto/rand's documented contract)
	key := idKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyBytes)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(key))
}

// CheckPassword reports whether password is the one digest was made of,
// comparing in constant time; an error for a digest it cannot read.
func CheckPassword(digest, password string) (bool, error) {
	parts := strings.Split(digest, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errors.New("not an argon2id digest")
	}
	var version int
	var memory, passes uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, fmt.Errorf("argon2id digest of version %q", parts[2])
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &passes, &threads); err != nil || memory == 0 || passes == 0 || threads == 0 {
		return false, fmt.Errorf("argon2id parameters %q", parts[3])
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, fmt.Errorf("argon2id salt: %w", err)
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil || len(want) == 0 {
		return false, fmt.Errorf("argon2id key: %v", err)
	}
	if memory > 4*argonMemoryKiB || passes > 16 || threads > 8 || len(want) > 64 {
		return false, fmt.Errorf("argon2id parameters %q are beyond what this service makes", parts[3])
	}
	got := idKey([]byte(password), salt, passes, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
