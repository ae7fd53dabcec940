package fault

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ClientText describes err for a client: the same facts as err.Error(),
// without Go type names, package paths or parser internals (JSON decode
// errors, number parsing). Use it wherever a decoding error reaches a
// message; errors of our own (*Error) keep their message.
func ClientText(err error) string {
	if err == nil {
		return ""
	}
	var se *Error
	if errors.As(err, &se) {
		return se.Message
	}
	var syn *json.SyntaxError
	if errors.As(err, &syn) {
		return fmt.Sprintf("malformed JSON at byte %d", syn.Offset)
	}
	var typ *json.UnmarshalTypeError
	if errors.As(err, &typ) {
		if typ.Field != "" {
			return fmt.Sprintf("field %q has the wrong JSON type (%s)", typ.Field, typ.Value)
		}
		return fmt.Sprintf("wrong JSON type (%s) at byte %d", typ.Value, typ.Offset)
	}
	var num *strconv.NumError
	if errors.As(err, &num) {
		return fmt.Sprintf("%q is not a valid number", num.Num)
	}
	return scrubGoNames(err.Error())
}

// goNames matches the Go-internal fragments decoders put in messages.
var goNames = []*regexp.Regexp{
	regexp.MustCompile(`(?:into )?Go (?:value|struct field) (?:of type )?[\w.\[\]*]+(?: of type [\w.\[\]*]+)?`),
	regexp.MustCompile(`\bstrconv\.\w+: `),
	regexp.MustCompile(`\bjson: `),
}

func scrubGoNames(s string) string {
	for _, re := range goNames {
		s = re.ReplaceAllString(s, "")
	}
	return strings.TrimSpace(s)
}
