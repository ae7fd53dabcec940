package credentials_test

import (
	"encoding/xml"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lakehold/catalog/credentials"
)

const s3NS = "http://s3.amazonaws.com/doc/2006-03-01/"

func TestParseDeleteObjectsAccepts(t *testing.T) {
	for _, c := range []struct {
		name, body string
		want       credentials.DeleteBatch
	}{
		{"plain", `<Delete><Object><Key>a/b</Key></Object></Delete>`,
			credentials.DeleteBatch{Objects: []credentials.DeleteObject{{Key: "a/b"}}}},
		{"s3 namespace, declaration, blanks", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Delete xmlns=\"" + s3NS + "\">\n  <Object>\n    <Key>a</Key>\n  </Object>\n</Delete>\n",
			credentials.DeleteBatch{Objects: []credentials.DeleteObject{{Key: "a"}}}},
		{"versions and quiet", `<Delete><Quiet>true</Quiet><Object><VersionId>v1</VersionId><Key>a</Key></Object><Object><Key>b</Key></Object></Delete>`,
			credentials.DeleteBatch{Quiet: true, Objects: []credentials.DeleteObject{{Key: "a", VersionID: "v1"}, {Key: "b"}}}},
		{"quiet false last", `<Delete><Object><Key>a</Key></Object><Quiet>false</Quiet></Delete>`,
			credentials.DeleteBatch{Objects: []credentials.DeleteObject{{Key: "a"}}}},
		{"escaped text and cdata", `<Delete><Object><Key>a&amp;b&#47;c</Key></Object><Object><Key><![CDATA[x<y]]></Key></Object></Delete>`,
			credentials.DeleteBatch{Objects: []credentials.DeleteObject{{Key: "a&b/c"}, {Key: "x<y"}}}},
		{"blank key text kept", `<Delete><Object><Key> a </Key></Object></Delete>`,
			credentials.DeleteBatch{Objects: []credentials.DeleteObject{{Key: " a "}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := credentials.ParseDeleteObjects(c.body)
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestParseDeleteObjectsRefuses(t *testing.T) {
	many := "<Delete>" + strings.Repeat("<Object><Key>a</Key></Object>", 1001) + "</Delete>"
	for name, body := range map[string]string{
		"two keys in one object":     `<Delete><Object><Key>wh/ns/t/a</Key><Key>wh/ns/t2/a</Key></Object></Delete>`,
		"prefixed key in s3 ns":      `<Delete xmlns:s="` + s3NS + `"><Object><s:Key>wh/ns/t2/a</s:Key></Object></Delete>`,
		"prefixed key beside key":    `<Delete xmlns:s="` + s3NS + `"><Object><Key>wh/ns/t/a</Key><s:Key>wh/ns/t2/a</s:Key></Object></Delete>`,
		"undeclared prefix":          `<Delete><Object><x:Key>a</x:Key></Object></Delete>`,
		"prefixed root":              `<s:Delete xmlns:s="` + s3NS + `"><s:Object><s:Key>a</s:Key></s:Object></s:Delete>`,
		"other default namespace":    `<Delete xmlns="urn:other"><Object><Key>a</Key></Object></Delete>`,
		"namespace on a child":       `<Delete><Object xmlns="` + s3NS + `"><Key>a</Key></Object></Delete>`,
		"attribute on key":           `<Delete><Object><Key id="1">a</Key></Object></Delete>`,
		"unknown element in object":  `<Delete><Object><Key>a</Key><ETag>x</ETag></Object></Delete>`,
		"unknown element in delete":  `<Delete><Object><Key>a</Key></Object><Bucket>b</Bucket></Delete>`,
		"object without key":         `<Delete><Object><VersionId>1</VersionId></Object></Delete>`,
		"two versions":               `<Delete><Object><Key>a</Key><VersionId>1</VersionId><VersionId>2</VersionId></Object></Delete>`,
		"quiet twice":                `<Delete><Quiet>true</Quiet><Object><Key>a</Key></Object><Quiet>false</Quiet></Delete>`,
		"quiet not boolean":          `<Delete><Object><Key>a</Key></Object><Quiet>yes</Quiet></Delete>`,
		"no object":                  `<Delete><Quiet>true</Quiet></Delete>`,
		"doctype with entity":        `<!DOCTYPE Delete [<!ENTITY k "wh/ns/t2/a">]><Delete><Object><Key>&k;</Key></Object></Delete>`,
		"undeclared entity":          `<Delete><Object><Key>&k;</Key></Object></Delete>`,
		"comment inside key":         `<Delete><Object><Key>wh/ns/t/<!-- -->a</Key></Object></Delete>`,
		"comment between elements":   `<Delete><!-- x --><Object><Key>a</Key></Object></Delete>`,
		"processing instruction":     `<Delete><?php x?><Object><Key>a</Key></Object></Delete>`,
		"declaration not first":      ` <?xml version="1.0"?><Delete><Object><Key>a</Key></Object></Delete>`,
		"utf-16 declaration":         `<?xml version="1.0" encoding="UTF-16"?><Delete><Object><Key>a</Key></Object></Delete>`,
		"element inside key":         `<Delete><Object><Key><b/>a</Key></Object></Delete>`,
		"text between elements":      `<Delete>x<Object><Key>a</Key></Object></Delete>`,
		"second root":                `<Delete><Object><Key>a</Key></Object></Delete><Delete><Object><Key>b</Key></Object></Delete>`,
		"trailing text":              `<Delete><Object><Key>a</Key></Object></Delete>junk`,
		"mismatched end":             `<Delete><Object><Key>a</Key></Quiet></Delete>`,
		"mismatched key end":         `<Delete><Object><Key>a</VersionId></Object></Delete>`,
		"unclosed":                   `<Delete><Object><Key>a</Key></Object>`,
		"other root":                 `<nope/>`,
		"not xml":                    `wh/ns/t/a`,
		"empty":                      ``,
		"more than 1000 objects":     many,
		"attribute other than xmlns": `<Delete xmlns="` + s3NS + `" a="b"><Object><Key>a</Key></Object></Delete>`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := credentials.ParseDeleteObjects(body)
			var ref *credentials.SignRefusal
			require.True(t, errors.As(err, &ref), "%v", err)
			require.False(t, ref.Forbidden, "a malformed body answers 400")
		})
	}
}

// laxDelete is how a lenient store might read a Delete body: by local
// name, whatever the namespace, every Key and VersionId of each Object.
type laxDelete struct {
	Objects []struct {
		Keys     []string `xml:"Key"`
		Versions []string `xml:"VersionId"`
	} `xml:"Object"`
}

// FuzzDeleteObjects checks that a body the strict parser accepts reads
// the same to a lax, namespace-blind reader: the same objects, each with
// exactly the one key (and version) the catalog checked.
func FuzzDeleteObjects(f *testing.F) {
	for _, s := range []string{
		`<Delete><Object><Key>a</Key></Object></Delete>`,
		`<Delete xmlns="` + s3NS + `"><Object><Key>a</Key><VersionId>1</VersionId></Object><Quiet>true</Quiet></Delete>`,
		`<Delete><Object><Key>a</Key><Key>b</Key></Object></Delete>`,
		`<Delete xmlns:s="` + s3NS + `"><Object><s:Key>a</s:Key></Object></Delete>`,
		`<?xml version="1.0"?><Delete><Object><Key><![CDATA[a]]>&amp;</Key></Object></Delete>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		got, err := credentials.ParseDeleteObjects(body)
		if err != nil {
			var ref *credentials.SignRefusal
			require.True(t, errors.As(err, &ref), "%v", err)
			return
		}
		var lax laxDelete
		require.NoError(t, xml.Unmarshal([]byte(body), &lax), "accepted but not XML")
		require.Len(t, lax.Objects, len(got.Objects))
		for i, o := range lax.Objects {
			require.Equal(t, []string{got.Objects[i].Key}, o.Keys)
			if got.Objects[i].VersionID == "" {
				require.LessOrEqual(t, len(o.Versions), 1)
			} else {
				require.Equal(t, []string{got.Objects[i].VersionID}, o.Versions)
			}
		}
	})
}
