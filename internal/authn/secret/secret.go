// Package secret makes and checks the client secrets of built-in service
// principals. A secret is 32 random bytes shown to the operator once; the
// catalog keeps only an argon2id hash of it, with its salt and parameters
// encoded in the stored string so that parameters can change later without
// invalidating existing hashes.
package secret

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Params are the argon2id cost parameters of a hash.
type Params struct {
	Time    uint32 // passes
	Memory  uint32 // KiB
	Threads uint8
}

// DefaultParams follow the RFC 9106 second recommendation scaled down: the
// secret already has 256 bits of entropy, so the hash only has to make a
// stolen database useless, not stretch a weak password; 19 MiB and 2 passes
// keep a token request near 20 ms.
var DefaultParams = Params{Time: 2, Memory: 19 * 1024, Threads: 1}

const (
	secretBytes = 32
	saltBytes   = 16
	keyBytes    = 32
	prefix      = "$argon2id$v=19$"
)

// ErrMalformedHash is returned by Verify when the stored hash is not one
// that Hash produces (a corrupted row).
var ErrMalformedHash = errors.New("secret: malformed argon2id hash")

// New returns a fresh random secret, base64url without padding (43
// characters, safe in form fields, Basic auth and shells).
func New() (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// NewClientID returns a random public client id ("lh-" and 20 hex-like
// characters); it names the principal in token requests.
func NewClientID() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "lh-" + strings.ToLower(base64.RawURLEncoding.EncodeToString(b)), nil
}

// Hash returns the encoded argon2id hash of secret with a random salt:
// $argon2id$v=19$m=<KiB>,t=<passes>,p=<threads>$<salt>$<key>. It fails only
// when the system random source does.
func Hash(secret string, p Params) (string, error) {
	salt := make([]byte, saltBytes)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(secret), salt, p.Time, p.Memory, p.Threads, keyBytes)
	return fmt.Sprintf("%sm=%d,t=%d,p=%d$%s$%s", prefix, p.Memory, p.Time, p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// maxMemory bounds the memory parameter read from a stored hash (256 MiB) so
// that a tampered row cannot make a token request allocate without limit.
const maxMemory = 256 << 10

// Verify reports whether secret matches the encoded hash, comparing in
// constant time. It returns ErrMalformedHash for a hash it cannot read.
func Verify(secret, encoded string) (bool, error) {
	p, salt, want, err := decode(encoded)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(secret), salt, p.Time, p.Memory, p.Threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

func decode(encoded string) (Params, []byte, []byte, error) {
	var p Params
	rest, ok := strings.CutPrefix(encoded, prefix)
	if !ok {
		return p, nil, nil, ErrMalformedHash
	}
	parts := strings.Split(rest, "$")
	if len(parts) != 3 {
		return p, nil, nil, ErrMalformedHash
	}
	for _, kv := range strings.Split(parts[0], ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return p, nil, nil, ErrMalformedHash
		}
		switch k {
		case "m":
			p.Memory = uint32(n)
		case "t":
			p.Time = uint32(n)
		case "p":
			if n > 255 {
				return p, nil, nil, ErrMalformedHash
			}
			p.Threads = uint8(n)
		default:
			return p, nil, nil, ErrMalformedHash
		}
	}
	if p.Time == 0 || p.Time > 10 || p.Threads == 0 || p.Memory < 8*uint32(p.Threads) || p.Memory > maxMemory {
		return p, nil, nil, ErrMalformedHash
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[1])
	key, err2 := base64.RawStdEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || len(salt) < 8 || len(key) < 16 || len(key) > 64 {
		return p, nil, nil, ErrMalformedHash
	}
	return p, salt, key, nil
}
