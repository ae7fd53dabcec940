package secret

import (
	"errors"
	"strings"
	"testing"
)

// fast keeps the tests quick; the format and compare are what is tested.
var fast = Params{Time: 1, Memory: 64, Threads: 1}

func TestHashVerify(t *testing.T) {
	s, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 43 {
		t.Fatalf("secret length %d, want 43", len(s))
	}
	h, err := Hash(s, fast)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(h, s) {
		t.Fatal("hash contains the secret")
	}
	h2, _ := Hash(s, fast)
	if h == h2 {
		t.Fatal("two hashes of one secret are equal: salt not random")
	}
	for _, tc := range []struct {
		secret string
		want   bool
	}{{s, true}, {s + "x", false}, {"", false}, {s[:42], false}} {
		ok, err := Verify(tc.secret, h)
		if err != nil || ok != tc.want {
			t.Errorf("Verify(%q) = %v, %v; want %v", tc.secret, ok, err, tc.want)
		}
	}
}

func TestVerifyMalformed(t *testing.T) {
	good, _ := Hash("x", fast)
	for _, h := range []string{
		"", "plain", "$argon2i$v=19$m=64,t=1,p=1$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5",
		strings.Replace(good, "m=64", "m=99999999", 1),
		strings.Replace(good, "t=1", "t=0", 1),
		strings.Replace(good, "p=1", "p=0", 1),
		strings.Replace(good, "m=64", "x=64", 1),
		good + "$extra",
	} {
		if _, err := Verify("x", h); !errors.Is(err, ErrMalformedHash) {
			t.Errorf("Verify(_, %q) err = %v, want ErrMalformedHash", h, err)
		}
	}
}

func TestClientID(t *testing.T) {
	a, _ := NewClientID()
	b, _ := NewClientID()
	if a == b || !strings.HasPrefix(a, "lh-") || len(a) != 19 {
		t.Fatalf("client ids %q %q", a, b)
	}
}

func FuzzVerify(f *testing.F) {
	good, _ := Hash("x", fast)
	f.Add("x", good)
	f.Add("", "$argon2id$v=19$m=8,t=1,p=1$AAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAA")
	f.Fuzz(func(t *testing.T, s, h string) {
		ok, err := Verify(s, h)
		if err != nil && ok {
			t.Fatal("ok with error")
		}
	})
}
