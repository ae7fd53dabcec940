package credentials

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
)

// s3Namespace is the only XML namespace a DeleteObjects body may name,
// and only as the default namespace of its root.
const s3Namespace = "http://s3.amazonaws.com/doc/2006-03-01/"

// maxDeleteObjects is S3's limit on the objects of one DeleteObjects.
const maxDeleteObjects = 1000

// DeleteBatch is a DeleteObjects body as the catalog read it.
type DeleteBatch struct {
	Objects []DeleteObject
	Quiet   bool
}

// DeleteObject is one object of a DeleteObjects body.
type DeleteObject struct {
	Key       string
	VersionID string // "" when the body names no version
}

// ParseDeleteObjects reads a DeleteObjects body strictly, so that no
// store can read other keys in it than the catalog checked. It fails
// with a malformed SignRefusal unless body is exactly S3's Delete
// document: a Delete root (with at most the S3 default xmlns) holding 1
// to 1000 Object elements and at most one Quiet (true or false), each
// Object holding exactly one Key and at most one VersionId, all text
// without markup inside. Refused: any other element or attribute, a
// namespace prefix, another namespace, a repeated element, text between
// elements, comments, processing instructions (but a leading XML
// declaration), DTDs and entities, and anything after the root.
func ParseDeleteObjects(body string) (DeleteBatch, error) {
	p := deleteParser{d: xml.NewDecoder(strings.NewReader(body))}
	p.d.Strict = true
	if err := p.prolog(); err != nil {
		return DeleteBatch{}, err
	}
	batch, err := p.root()
	if err != nil {
		return DeleteBatch{}, err
	}
	if err := p.epilog(); err != nil {
		return DeleteBatch{}, err
	}
	return batch, nil
}

var errDeleteBody = malformed("The DeleteObjects body is not exactly an S3 Delete document")

func badDelete(what string) error {
	return malformed("The DeleteObjects body is not exactly an S3 Delete document: %s", what)
}

// deleteParser walks the body's raw tokens: RawToken keeps namespace
// prefixes as written (Token would map s:Key to the S3 namespace and
// hide the prefix), so this parser matches start and end tags itself.
type deleteParser struct {
	d       *xml.Decoder
	pending xml.Token // the first token, when it is not the declaration
}

// next returns the next token that is not blank text between elements.
func (p *deleteParser) next() (xml.Token, error) {
	for {
		tok, err := p.d.RawToken()
		if err != nil {
			return nil, err
		}
		if cd, ok := tok.(xml.CharData); ok && strings.TrimLeft(string(cd), " \t\r\n") == "" {
			continue
		}
		return xml.CopyToken(tok), nil
	}
}

// prolog skips an XML declaration at the very start of the body.
func (p *deleteParser) prolog() error {
	tok, err := p.d.RawToken()
	if err != nil {
		return errDeleteBody
	}
	if pi, ok := tok.(xml.ProcInst); ok && pi.Target == "xml" {
		tok = nil
	}
	if tok != nil {
		p.pending = xml.CopyToken(tok)
	}
	return nil
}

// take returns the pending first token, else the next one.
func (p *deleteParser) take() (xml.Token, error) {
	if p.pending != nil {
		tok := p.pending
		p.pending = nil
		if cd, ok := tok.(xml.CharData); ok && strings.TrimLeft(string(cd), " \t\r\n") == "" {
			return p.next()
		}
		return tok, nil
	}
	return p.next()
}

// start wants the start tag of an unprefixed element, without
// attributes but S3's default xmlns on the root, and returns its name.
func (p *deleteParser) start(tok xml.Token, root bool) (string, error) {
	se, ok := tok.(xml.StartElement)
	if !ok {
		return "", badDelete("markup or text where an element belongs")
	}
	if se.Name.Space != "" {
		return "", badDelete("a namespace prefix")
	}
	for _, a := range se.Attr {
		if !root || a.Name.Space != "" || a.Name.Local != "xmlns" || a.Value != s3Namespace {
			return "", badDelete("an attribute or namespace other than S3's default xmlns")
		}
	}
	return se.Name.Local, nil
}

func (p *deleteParser) root() (DeleteBatch, error) {
	tok, err := p.take()
	if err != nil {
		return DeleteBatch{}, errDeleteBody
	}
	name, err := p.start(tok, true)
	if err != nil {
		return DeleteBatch{}, err
	}
	if name != "Delete" {
		return DeleteBatch{}, badDelete("the root is not Delete")
	}
	var batch DeleteBatch
	quiet := false
	for {
		tok, err := p.next()
		if err != nil {
			return DeleteBatch{}, errDeleteBody
		}
		if end, ok := tok.(xml.EndElement); ok {
			if end.Name.Space != "" || end.Name.Local != "Delete" {
				return DeleteBatch{}, errDeleteBody
			}
			break
		}
		name, err := p.start(tok, false)
		if err != nil {
			return DeleteBatch{}, err
		}
		switch name {
		case "Object":
			if len(batch.Objects) == maxDeleteObjects {
				return DeleteBatch{}, badDelete("more than 1000 objects")
			}
			o, err := p.object()
			if err != nil {
				return DeleteBatch{}, err
			}
			batch.Objects = append(batch.Objects, o)
		case "Quiet":
			v, err := p.text("Quiet")
			if err != nil {
				return DeleteBatch{}, err
			}
			if quiet || (v != "true" && v != "false") {
				return DeleteBatch{}, badDelete("Quiet given twice or not true or false")
			}
			quiet, batch.Quiet = true, v == "true"
		default:
			return DeleteBatch{}, badDelete("an element other than Object or Quiet in Delete")
		}
	}
	if len(batch.Objects) == 0 {
		return DeleteBatch{}, malformed("The DeleteObjects body names no object")
	}
	return batch, nil
}

// object reads an Object's children up to its end tag.
func (p *deleteParser) object() (DeleteObject, error) {
	var o DeleteObject
	hasKey, hasVersion := false, false
	for {
		tok, err := p.next()
		if err != nil {
			return DeleteObject{}, errDeleteBody
		}
		if end, ok := tok.(xml.EndElement); ok {
			if end.Name.Space != "" || end.Name.Local != "Object" || !hasKey {
				return DeleteObject{}, badDelete("an Object without exactly one Key")
			}
			return o, nil
		}
		name, err := p.start(tok, false)
		if err != nil {
			return DeleteObject{}, err
		}
		switch {
		case name == "Key" && !hasKey:
			o.Key, err = p.text("Key")
			hasKey = true
		case name == "VersionId" && !hasVersion:
			o.VersionID, err = p.text("VersionId")
			hasVersion = true
		default:
			return DeleteObject{}, badDelete("an element repeated or unknown in Object")
		}
		if err != nil {
			return DeleteObject{}, err
		}
	}
}

// text reads the text of a leaf element up to its end tag: character
// data (CDATA included) and nothing else.
func (p *deleteParser) text(name string) (string, error) {
	var b strings.Builder
	for {
		tok, err := p.d.RawToken()
		if err != nil {
			return "", errDeleteBody
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.EndElement:
			if t.Name.Space != "" || t.Name.Local != name {
				return "", errDeleteBody
			}
			return b.String(), nil
		default:
			return "", badDelete("markup inside " + name)
		}
	}
}

// epilog wants nothing but blanks after the root.
func (p *deleteParser) epilog() error {
	_, err := p.next()
	if errors.Is(err, io.EOF) {
		return nil
	}
	return badDelete("content after the Delete element")
}
