// Package storagepath is the syntax of storage locations, as pure
// functions: it puts them (file://, s3://, gs://, abfss://, wasbs://) in
// one canonical form, decides whether one location lies inside another,
// and names a file relative to a prefix for messages. Which prefixes a
// warehouse or table owns (the location policy) is service/locations,
// built on this.
//
// Canonical form: lowercase scheme; file locations as file:///abs/path
// (file:/abs and file://localhost/abs are accepted on input), object-store
// locations as scheme://bucket/key (Azure: scheme://container@host/key,
// where the abfss and wasbs names of one object are the same location); no
// "." or empty segment, no trailing slash. A ".." segment is refused, never resolved: resolving it would make
// the check and the storage layer disagree about where a path points.
package storagepath

import (
	"net/url"
	"strings"
)

// Error is a refused location. Its text gives the reason only, never the
// location itself, so it is safe to show to a client.
type Error struct{ Reason string }

func (e *Error) Error() string { return e.Reason }

func invalid(reason string) error { return &Error{Reason: reason} }

// Normalize returns loc in canonical form. It returns an *Error when loc
// has no supported scheme (file, s3, gs, abfss, wasbs), is relative, names a file host
// other than localhost, has no bucket, is a filesystem root, contains a
// ".." segment, a control character, '?', '#' or '\', a bad
// percent-escape in a file path, or an empty or "." segment inside an
// object key (object keys are literal: a//b and a/b are different keys, so
// they cannot be collapsed as on a filesystem).
func Normalize(loc string) (string, error) {
	if canonical(loc) {
		return loc, nil
	}
	return normalize(loc)
}

// canonical reports whether loc is a file, s3 or gs location already in
// canonical form, which Normalize then returns as it is: every load and
// commit normalizes the same few locations several times, and splitting
// and rebuilding them was a measurable part of a load's cost. It answers
// false whenever it is unsure (a '%', an Azure location), leaving the
// decision to normalize; FuzzCanonical checks that the two agree.
func canonical(loc string) bool {
	var rest string
	switch {
	case strings.HasPrefix(loc, "file:///"):
		rest = loc[len("file:///"):]
	case strings.HasPrefix(loc, "s3://"):
		rest = loc[len("s3://"):]
	case strings.HasPrefix(loc, "gs://"):
		rest = loc[len("gs://"):]
	default:
		return false
	}
	if rest == "" || rest[len(rest)-1] == '/' {
		return false
	}
	start := 0
	for i := 0; i <= len(rest); i++ {
		if i < len(rest) {
			if c := rest[i]; c != '/' {
				if c < 0x20 || c == 0x7f || c == '%' || c == '?' || c == '#' || c == '\\' {
					return false
				}
				continue
			}
		}
		if seg := rest[start:i]; seg == "" || seg == "." || seg == ".." {
			return false
		}
		if start == 0 && loc[0] != 'f' && !validBucket(rest[:i]) {
			return false
		}
		start = i + 1
	}
	return true
}

// normalize is Normalize without the shortcut for canonical input.
func normalize(loc string) (string, error) {
	for i := 0; i < len(loc); i++ {
		if c := loc[i]; c < 0x20 || c == 0x7f || c == '?' || c == '#' || c == '\\' {
			return "", invalid("control characters, '?', '#' and '\\' are not allowed in locations")
		}
	}
	i := strings.IndexByte(loc, ':')
	if i <= 0 || strings.IndexByte(loc[:i], '/') >= 0 {
		return "", invalid("a location needs a scheme (file, s3, gs, abfss or wasbs); relative paths are not accepted")
	}
	switch scheme := strings.ToLower(loc[:i]); scheme {
	case "file":
		return normalizeFile(loc[i+1:])
	case "s3", "gs":
		return normalizeObject(scheme, loc[i+1:])
	case "abfss", "wasbs":
		return normalizeAzure(scheme, loc[i+1:])
	case "abfs", "wasb":
		return "", invalid("use abfss:// or wasbs:// (TLS) for Azure locations")
	}
	return "", invalid("scheme must be file, s3, gs, abfss or wasbs")
}

// normalizeFile handles what follows "file:". The storage layer
// percent-decodes file paths, so segments are judged decoded (an escaped
// ".." is still ".."), then re-escaped canonically.
func normalizeFile(rest string) (string, error) {
	path := rest
	if strings.HasPrefix(rest, "//") {
		auth, p, _ := strings.Cut(rest[2:], "/")
		if auth != "" && !strings.EqualFold(auth, "localhost") {
			return "", invalid("file locations must not name a host")
		}
		path = "/" + p
	}
	if !strings.HasPrefix(path, "/") {
		return "", invalid("file locations need an absolute path (file:///path)")
	}
	var out []string
	for _, seg := range strings.Split(path, "/") {
		dec, err := url.PathUnescape(seg)
		if err != nil {
			return "", invalid("bad percent-escape in a file location")
		}
		switch {
		case dec == "" || dec == ".":
			continue
		case dec == "..":
			return "", invalid("'..' segments are not allowed in locations")
		case strings.ContainsAny(dec, "/\\") || hasControl(dec):
			return "", invalid("escaped '/', '\\' or control characters are not allowed in file locations")
		}
		out = append(out, escapeFileSegment(dec))
	}
	if len(out) == 0 {
		return "", invalid("a filesystem root is not a location")
	}
	return "file:///" + strings.Join(out, "/"), nil
}

// escapeFileSegment escapes only what would change how a file URI parses.
func escapeFileSegment(s string) string {
	if !strings.ContainsAny(s, "%?#") {
		return s
	}
	r := strings.NewReplacer("%", "%25", "?", "%3F", "#", "%23")
	return r.Replace(s)
}

func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}

// normalizeObject handles what follows "s3:" or "gs:": //bucket/key.
func normalizeObject(scheme, rest string) (string, error) {
	if !strings.HasPrefix(rest, "//") {
		return "", invalid("the bucket must be the authority (" + scheme + "://bucket/path)")
	}
	bucket, key, _ := strings.Cut(rest[2:], "/")
	if bucket == "" {
		return "", invalid("a location needs a bucket (" + scheme + "://bucket/path)")
	}
	if !validBucket(bucket) {
		return "", invalid("bucket names use lowercase letters, digits, '.', '_' and '-'")
	}
	return normalizeKey(scheme+"://"+bucket, key)
}

// normalizeKey appends an object key to its canonical authority, refusing
// empty, "." and ".." segments (decoded or not).
func normalizeKey(authority, key string) (string, error) {
	key = strings.TrimRight(key, "/")
	if key == "" {
		return authority, nil
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" {
			return "", invalid("empty segments ('//') are not allowed in object-store locations")
		}
		dec, err := url.PathUnescape(seg)
		if err != nil {
			dec = seg // keys are literal; an odd '%' is just a character
		}
		if seg == "." || seg == ".." || dec == "." || dec == ".." {
			return "", invalid("'.' and '..' segments are not allowed in locations")
		}
	}
	return authority + "/" + key, nil
}

func validBucket(b string) bool {
	for i := 0; i < len(b); i++ {
		c := b[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (i == 0 || c != '.' && c != '_' && c != '-') {
			return false
		}
	}
	return true
}

// Within reports whether loc is prefix itself or lies below it, after
// normalising both; false when either does not normalise. On canonical
// input it is a string-prefix test at a segment boundary.
func Within(prefix, loc string) bool {
	p, err := Normalize(prefix)
	if err != nil {
		return false
	}
	l, err := Normalize(loc)
	return err == nil && within(p, l)
}

func within(p, l string) bool {
	p, l = same(p), same(l)
	return l == p || strings.HasPrefix(l, p+"/")
}

// Overlap reports whether a and b are equal or one contains the other.
func Overlap(a, b string) bool { return Within(a, b) || Within(b, a) }

// Rel names loc relative to prefix ("" when they are equal). ok is false
// when loc is not within prefix; rel is then "".
func Rel(prefix, loc string) (rel string, ok bool) {
	p, err := Normalize(prefix)
	if err != nil {
		return "", false
	}
	l, err := Normalize(loc)
	if err != nil || !within(p, l) {
		return "", false
	}
	return strings.TrimPrefix(strings.TrimPrefix(same(l), same(p)), "/"), true
}

// Set is a list of canonical prefixes.
type Set []string

// NewSet normalises every location; an *Error for the first that does not
// normalise.
func NewSet(locs ...string) (Set, error) {
	s := make(Set, 0, len(locs))
	for _, l := range locs {
		n, err := Normalize(l)
		if err != nil {
			return nil, err
		}
		s = append(s, n)
	}
	return s, nil
}

// Contains reports whether loc is within one of the prefixes; false when
// loc does not normalise.
func (s Set) Contains(loc string) bool {
	l, err := Normalize(loc)
	if err != nil {
		return false
	}
	for _, p := range s {
		if within(p, l) {
			return true
		}
	}
	return false
}

// ContainsBelow is Contains for a location strictly below a prefix: a
// table may live inside a warehouse, not at its root.
func (s Set) ContainsBelow(loc string) bool {
	l, err := Normalize(loc)
	if err != nil {
		return false
	}
	for _, p := range s {
		if l != p && within(p, l) {
			return true
		}
	}
	return false
}

// Overlaps reports whether any prefix of s overlaps any prefix of o.
func (s Set) Overlaps(o Set) bool {
	for _, a := range s {
		for _, b := range o {
			if within(a, b) || within(b, a) {
				return true
			}
		}
	}
	return false
}
