package validation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
)

// Reasons for rejecting a function (SQL UDF) metadata document.
const (
	ReasonFunctionMetadata = "invalid-function-metadata"
)

// FunctionMetadata is what the catalog reads from a UDF metadata document
// (format/udf-spec.md, the REST spec's FunctionMetadata); the document
// itself is kept as it was sent.
type FunctionMetadata struct {
	UUID          string
	FormatVersion int
	Location      string
	Definitions   int
}

// udfDoc mirrors the fields of the UDF spec the catalog checks; pointers
// tell a missing required field from a zero one.
type udfDoc struct {
	UUID          *string           `json:"function-uuid"`
	FormatVersion *int              `json:"format-version"`
	Definitions   *[]udfDefinition  `json:"definitions"`
	DefinitionLog *[]udfLogEntry    `json:"definition-log"`
	Location      *string           `json:"location"`
	Properties    map[string]string `json:"properties"`
	Secure        *bool             `json:"secure"`
	Doc           *string           `json:"doc"`
}

type udfDefinition struct {
	ID               *string         `json:"definition-id"`
	Parameters       *[]udfParameter `json:"parameters"`
	ReturnType       json.RawMessage `json:"return-type"`
	Versions         *[]udfVersion   `json:"versions"`
	CurrentVersionID *int64          `json:"current-version-id"`
	FunctionType     *string         `json:"function-type"`
	ReturnNullable   *bool           `json:"return-nullable"`
	SpecificName     *string         `json:"specific-name"`
	Doc              *string         `json:"doc"`
}

type udfParameter struct {
	Name *string         `json:"name"`
	Type json.RawMessage `json:"type"`
}

type udfVersion struct {
	ID              *int64              `json:"version-id"`
	Representations *[]udfRepresentaton `json:"representations"`
	TimestampMs     *int64              `json:"timestamp-ms"`
	Deterministic   *bool               `json:"deterministic"`
	OnNullInput     *string             `json:"on-null-input"`
}

type udfRepresentaton struct {
	Type    *string `json:"type"`
	Dialect *string `json:"dialect"`
	SQL     *string `json:"sql"`
}

type udfLogEntry struct {
	TimestampMs *int64 `json:"timestamp-ms"`
	Versions    *[]struct {
		DefinitionID *string `json:"definition-id"`
		VersionID    *int64  `json:"version-id"`
	} `json:"definition-versions"`
}

// uuidPattern is the textual form of a UUID (the spec's format: uuid).
var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// ValidateFunctionMetadata checks doc against the required fields and
// enumerations of the UDF metadata spec (format-version 1): it returns
// what the catalog needs of it, or an *Error with ReasonFunctionMetadata
// naming the first field that is missing or wrong. SQL bodies and type
// strings are not interpreted: engines own them.
func ValidateFunctionMetadata(doc []byte) (*FunctionMetadata, *Error) {
	var d udfDoc
	dec := json.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&d); err != nil {
		return nil, badUDF("function metadata is not a JSON object of the UDF spec: %s", jsonProblem(err))
	}
	// More() is false before a stray '}' or ']': only io.EOF proves the
	// document ends with the object.
	if _, err := dec.Token(); err != io.EOF {
		return nil, badUDF("function metadata has trailing data after the JSON object")
	}
	switch {
	case d.UUID == nil:
		return nil, badUDF("function metadata: function-uuid is required")
	case !uuidPattern.MatchString(*d.UUID):
		return nil, badUDF("function metadata: function-uuid is not a UUID")
	case d.FormatVersion == nil:
		return nil, badUDF("function metadata: format-version is required")
	case *d.FormatVersion != 1:
		return nil, badUDF("function metadata: format-version must be 1, not %d", *d.FormatVersion)
	case d.Definitions == nil:
		return nil, badUDF("function metadata: definitions is required")
	case d.DefinitionLog == nil:
		return nil, badUDF("function metadata: definition-log is required")
	}
	ids := map[string]map[int64]bool{}
	for i, def := range *d.Definitions {
		versions, err := checkDefinition(i, def)
		if err != nil {
			return nil, err
		}
		if ids[*def.ID] != nil {
			return nil, badUDF("function metadata: definitions[%d]: definition-id %q is not unique", i, *def.ID)
		}
		ids[*def.ID] = versions
	}
	if err := checkDefinitionLog(*d.DefinitionLog, ids); err != nil {
		return nil, err
	}
	m := &FunctionMetadata{UUID: *d.UUID, FormatVersion: *d.FormatVersion, Definitions: len(*d.Definitions)}
	if d.Location != nil {
		m.Location = *d.Location
	}
	return m, nil
}

// checkDefinition checks one definition and returns its version ids.
func checkDefinition(i int, def udfDefinition) (map[int64]bool, *Error) {
	at := fmt.Sprintf("definitions[%d]", i)
	switch {
	case def.ID == nil:
		return nil, badUDF("function metadata: %s: definition-id is required", at)
	case def.Parameters == nil:
		return nil, badUDF("function metadata: %s: parameters is required", at)
	case len(def.ReturnType) == 0 || string(def.ReturnType) == "null":
		return nil, badUDF("function metadata: %s: return-type is required", at)
	case def.Versions == nil || len(*def.Versions) == 0:
		return nil, badUDF("function metadata: %s: versions is required and must not be empty", at)
	case def.CurrentVersionID == nil:
		return nil, badUDF("function metadata: %s: current-version-id is required", at)
	case def.FunctionType == nil:
		return nil, badUDF("function metadata: %s: function-type is required", at)
	case *def.FunctionType != "udf" && *def.FunctionType != "udtf":
		return nil, badUDF("function metadata: %s: function-type must be udf or udtf", at)
	}
	if err := checkType(at+": return-type", def.ReturnType); err != nil {
		return nil, err
	}
	if *def.FunctionType == "udtf" && !isStructType(def.ReturnType) {
		return nil, badUDF("function metadata: %s: a udtf's return-type must be a struct", at)
	}
	for j, p := range *def.Parameters {
		if p.Name == nil {
			return nil, badUDF("function metadata: %s.parameters[%d]: name is required", at, j)
		}
		if err := checkType(fmt.Sprintf("%s.parameters[%d]: type", at, j), p.Type); err != nil {
			return nil, err
		}
	}
	versions := map[int64]bool{}
	for j, v := range *def.Versions {
		if err := checkVersion(fmt.Sprintf("%s.versions[%d]", at, j), v); err != nil {
			return nil, err
		}
		versions[*v.ID] = true
	}
	if !versions[*def.CurrentVersionID] {
		return nil, badUDF("function metadata: %s: current-version-id %d is not one of its versions", at, *def.CurrentVersionID)
	}
	return versions, nil
}

// checkVersion checks one definition version.
func checkVersion(at string, v udfVersion) *Error {
	switch {
	case v.ID == nil:
		return badUDF("function metadata: %s: version-id is required", at)
	case v.Representations == nil:
		return badUDF("function metadata: %s: representations is required", at)
	case v.TimestampMs == nil:
		return badUDF("function metadata: %s: timestamp-ms is required", at)
	case v.OnNullInput != nil && *v.OnNullInput != "return-null" && *v.OnNullInput != "call":
		return badUDF("function metadata: %s: on-null-input must be return-null or call", at)
	}
	for k, r := range *v.Representations {
		switch {
		case r.Type == nil || *r.Type != "sql":
			return badUDF("function metadata: %s.representations[%d]: type must be sql", at, k)
		case r.Dialect == nil:
			return badUDF("function metadata: %s.representations[%d]: dialect is required", at, k)
		case r.SQL == nil:
			return badUDF("function metadata: %s.representations[%d]: sql is required", at, k)
		}
	}
	return nil
}

// checkDefinitionLog checks that every log entry names definitions and
// versions the document has.
func checkDefinitionLog(log []udfLogEntry, ids map[string]map[int64]bool) *Error {
	for i, e := range log {
		at := fmt.Sprintf("definition-log[%d]", i)
		if e.TimestampMs == nil {
			return badUDF("function metadata: %s: timestamp-ms is required", at)
		}
		if e.Versions == nil {
			return badUDF("function metadata: %s: definition-versions is required", at)
		}
		for j, ref := range *e.Versions {
			if ref.DefinitionID == nil || ref.VersionID == nil {
				return badUDF("function metadata: %s.definition-versions[%d]: definition-id and version-id are required", at, j)
			}
			if !ids[*ref.DefinitionID][*ref.VersionID] {
				return badUDF("function metadata: %s.definition-versions[%d]: no version %d of definition %q", at, j, *ref.VersionID, *ref.DefinitionID)
			}
		}
	}
	return nil
}

// udfType is a nested UDF type object (list, map or struct).
type udfType struct {
	Type    *string           `json:"type"`
	Element json.RawMessage   `json:"element"`
	Key     json.RawMessage   `json:"key"`
	Value   json.RawMessage   `json:"value"`
	Fields  *[]udfStructField `json:"fields"`
}

type udfStructField struct {
	Name *string         `json:"name"`
	Type json.RawMessage `json:"type"`
}

// maxTypeDepth bounds the nesting of a type the catalog walks.
const maxTypeDepth = 64

// checkType checks a FunctionDataType: a non-empty string without spaces
// or quotes, or a list, map or struct object with its required fields.
func checkType(at string, raw json.RawMessage) *Error {
	return checkTypeDepth(at, raw, 0)
}

func checkTypeDepth(at string, raw json.RawMessage, depth int) *Error {
	if depth > maxTypeDepth {
		return badUDF("function metadata: %s is nested too deeply", at)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return badUDF("function metadata: %s is required", at)
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || s == "" || bytes.ContainsAny([]byte(s), " \t\n\"'") {
			return badUDF("function metadata: %s is not a type string", at)
		}
		return nil
	}
	var t udfType
	if raw[0] != '{' || json.Unmarshal(raw, &t) != nil || t.Type == nil {
		return badUDF("function metadata: %s is neither a type string nor a list, map or struct", at)
	}
	switch *t.Type {
	case "list":
		return checkTypeDepth(at+".element", t.Element, depth+1)
	case "map":
		if err := checkTypeDepth(at+".key", t.Key, depth+1); err != nil {
			return err
		}
		return checkTypeDepth(at+".value", t.Value, depth+1)
	case "struct":
		if t.Fields == nil {
			return badUDF("function metadata: %s: a struct needs fields", at)
		}
		for i, f := range *t.Fields {
			if f.Name == nil {
				return badUDF("function metadata: %s.fields[%d]: name is required", at, i)
			}
			if err := checkTypeDepth(fmt.Sprintf("%s.fields[%d].type", at, i), f.Type, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	return badUDF("function metadata: %s: type must be list, map or struct", at)
}

// isStructType reports whether raw is a struct type object.
func isStructType(raw json.RawMessage) bool {
	var t udfType
	return json.Unmarshal(raw, &t) == nil && t.Type != nil && *t.Type == "struct"
}

func badUDF(format string, args ...any) *Error {
	return reject(ReasonFunctionMetadata, nil, format, args...)
}

// jsonProblem is a decode error's text without the Go type names.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at offset %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("field %s has the wrong type", te.Field)
	}
	return "invalid JSON"
}
