package secret

import (
	"strings"
	"testing"
)

// TestPasswordDigests: a password checks against its own digest only;
// two digests of one password differ (salted); the digest holds no trace
// of the password; a digest that is not one is an error, not a match.
func TestPasswordDigests(t *testing.T) {
	t.Parallel()
	digest := HashPassword("correct horse battery staple")
	if !strings.HasPrefix(digest, "$argon2id$v=19$m=19456,t=2,p=1$") || strings.Contains(digest, "horse") {
		t.Errorf("digest %q", digest)
	}
	if ok, err := CheckPassword(digest, "correct horse battery staple"); !ok || err != nil {
		t.Errorf("the right password: %v %v", ok, err)
	}
	if ok, err := CheckPassword(digest, "correct horse battery stapl"); ok || err != nil {
		t.Errorf("a wrong password: %v %v", ok, err)
	}
	if again := HashPassword("correct horse battery staple"); again == digest {
		t.Error("two digests of one password are equal: no salt")
	}
	for _, bad := range []string{"", "plain", "$argon2i$v=19$m=1,t=1,p=1$c2FsdA$a2V5", "$argon2id$v=19$m=0,t=1,p=1$c2FsdA$a2V5",
		"$argon2id$v=19$m=4194304,t=1,p=1$c2FsdA$a2V5"} { // 4 GiB: a digest must not make the service spend that
		if ok, err := CheckPassword(bad, "x"); ok || err == nil {
			t.Errorf("digest %q: %v %v, want an error", bad, ok, err)
		}
	}
}
