package credentials

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
)

// Sealer encrypts secrets at rest (AES-256-GCM with the server's key).
type Sealer struct {
	aead cipher.AEAD
}

// ErrNoKey is returned when a secret must be sealed or opened but the
// server has no secret key configured.
var ErrNoKey = errors.New("no server secret key configured (--secret-key)")

// NewSealer returns a Sealer for a 32-byte key; a nil key gives a Sealer
// that refuses to seal or open (ErrNoKey).
func NewSealer(key []byte) (*Sealer, error) {
	if key == nil {
		return &Sealer{}, nil
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("secret key must be 32 bytes, got %d", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

// Seal encrypts plain; the result is base64 text safe to store.
func (s *Sealer) Seal(plain string) (string, error) {
	if s.aead == nil {
		return "", ErrNoKey
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(s.aead.Seal(nonce, nonce, []byte(plain), nil)), nil
}

// Open decrypts a value produced by Seal. It fails for a wrong key or a
// tampered value.
func (s *Sealer) Open(sealed string) (string, error) {
	if s.aead == nil {
		return "", ErrNoKey
	}
	b, err := base64.StdEncoding.DecodeString(sealed)
	if err != nil || len(b) < s.aead.NonceSize() {
		return "", errors.New("sealed secret is malformed")
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, b[:n], b[n:], nil)
	if err != nil {
		return "", errors.New("sealed secret does not open with this key")
	}
	return string(plain), nil
}
