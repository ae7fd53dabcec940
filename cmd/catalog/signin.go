package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/lakehold/catalog/internal/signin"
	"github.com/lakehold/catalog/service"
)

// signInFlags bound sign-ins at POST /v1/oauth/tokens and the sessions
// they start (README, flags; docs/access.md, "Bounded sign-in").
type signInFlags struct {
	cfg           signin.Config
	maxSessionAge time.Duration
	err           error // a malformed environment variable
}

func registerSignInFlags(fs *flag.FlagSet) *signInFlags {
	sf := &signInFlags{}
	intVar := func(p *int, name, env string, def int, usage string) {
		v, err := envIntOr(env, def)
		if err != nil && sf.err == nil {
			sf.err = err
		}
		fs.IntVar(p, name, v, usage+" ["+env+"]")
	}
	intVar(&sf.cfg.Concurrency, "signin-concurrency", "CATALOG_SIGNIN_CONCURRENCY", signin.DefaultConcurrency(),
		"client secrets verified at once on this replica (argon2id, 19 MiB each); unless set, 2×GOMAXPROCS within [4, 16]")
	fs.DurationVar(&sf.cfg.Wait, "signin-wait", envDuration("CATALOG_SIGNIN_WAIT", signin.DefaultWait),
		"how long a sign-in waits for a verification slot before it is answered 503 temporarily_unavailable with Retry-After [CATALOG_SIGNIN_WAIT]")
	intVar(&sf.cfg.MaxFailures, "signin-max-failures", "CATALOG_SIGNIN_MAX_FAILURES", signin.DefaultMaxFailures,
		"failed sign-ins of one client id (known or not) after which it is locked out: 429 slow_down with Retry-After, no secret checked")
	intVar(&sf.cfg.SourceMaxFailures, "signin-source-max-failures", "CATALOG_SIGNIN_SOURCE_MAX_FAILURES", signin.DefaultSourceMaxFailures,
		"failed sign-ins from one address (IPv4, or IPv6 /64) after which it is locked out, whatever ids it names; 0: no per-address limit (behind a proxy every client has the proxy's address)")
	fs.DurationVar(&sf.cfg.Window, "signin-failure-window", envDuration("CATALOG_SIGNIN_FAILURE_WINDOW", signin.DefaultWindow),
		"failures are forgotten once a client id or address had none, and no lockout, for this long [CATALOG_SIGNIN_FAILURE_WINDOW]")
	fs.DurationVar(&sf.cfg.Lockout, "signin-lockout", envDuration("CATALOG_SIGNIN_LOCKOUT", signin.DefaultLockout),
		"first lockout; it doubles with each further failure [CATALOG_SIGNIN_LOCKOUT]")
	fs.DurationVar(&sf.cfg.MaxLockout, "signin-max-lockout", envDuration("CATALOG_SIGNIN_MAX_LOCKOUT", signin.DefaultMaxLockout),
		"longest lockout [CATALOG_SIGNIN_MAX_LOCKOUT]")
	fs.DurationVar(&sf.maxSessionAge, "max-session-age", envDuration("CATALOG_MAX_SESSION_AGE", service.DefaultMaxSessionAge),
		"how long token exchanges may renew a session begun with the client credentials; no token outlives it, and then the client signs in again [CATALOG_MAX_SESSION_AGE]")
	return sf
}

// check validates the flags and turns them into the server's form.
func (sf *signInFlags) check() error {
	if sf.err != nil {
		return sf.err
	}
	c := &sf.cfg
	switch {
	case c.Concurrency < 1 || c.Concurrency > 1024:
		return errors.New("--signin-concurrency must be between 1 and 1024")
	case c.Wait <= 0 || c.Wait > time.Minute:
		return errors.New("--signin-wait must be positive and at most 1m")
	case c.MaxFailures < 1:
		return errors.New("--signin-max-failures must be at least 1")
	case c.SourceMaxFailures < 0:
		return errors.New("--signin-source-max-failures must not be negative (0 turns the per-address limit off)")
	case c.Window <= 0 || c.Lockout <= 0:
		return errors.New("--signin-failure-window and --signin-lockout must be positive")
	case c.MaxLockout < c.Lockout:
		return errors.New("--signin-max-lockout must be at least --signin-lockout")
	case sf.maxSessionAge < time.Minute:
		return errors.New("--max-session-age must be at least 1m")
	}
	if c.SourceMaxFailures == 0 {
		c.SourceMaxFailures = -1 // off, in signin.Config's terms
	}
	return nil
}

// envIntOr reads an integer from the environment: def when unset, an
// error when set to something else.
func envIntOr(key string, def int) (int, error) {
	v := os.Getenv(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%s=%q: want an integer", key, v)
	}
	return n, nil
}
