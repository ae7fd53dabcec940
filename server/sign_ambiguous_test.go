package server_test

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRemoteSigningAmbiguous: a request that SeaweedFS (or another store)
// could read otherwise than the catalog did is not signed: a copy source
// given twice or split by a comma, a list prefix given twice, a
// DeleteObjects body with two keys in one object, a namespaced key or an
// unknown element. The same operations within the table, spelled once,
// are signed and SeaweedFS carries them out with the catalog's signature.
func TestRemoteSigningAmbiguous(t *testing.T) {
	b, ep, _ := signingSetup(t)
	key := tableKey(t, b)
	other := strings.Replace(key, "/ns/t", "/ns/t2", 1)
	bob, alice := signer{t, b, "builtin:bob"}, signer{t, b, "builtin:alice"}
	obj := ep + "/warehouse/" + key + "/data/a%20b%2Bc.bin"
	sign, s3status, body := bob.send("PUT", obj, nil, []byte("hello"), false)
	require.Equal(t, [2]int{200, 200}, [2]int{sign, s3status}, "%s", body)

	inside, outside := "warehouse/"+key+"/data/a b+c.bin", "warehouse/"+other+"/data/x.bin"
	for name, h := range map[string]map[string][]string{
		"two values":                {"x-amz-copy-source": {inside, outside}},
		"two spellings":             {"x-amz-copy-source": {inside}, "X-Amz-Copy-Source": {outside}},
		"one value split by comma":  {"x-amz-copy-source": {inside + "," + outside}},
		"version then another path": {"x-amz-copy-source": {inside + "?versionId=1&x=/" + outside}},
	} {
		sign, _, body = bob.send("PUT", ep+"/warehouse/"+key+"/data/copy.bin", h, nil, false)
		require.Equal(t, 400, sign, "copy source %s: %s", name, body)
	}
	for _, q := range []string{"prefix=" + key + "/&prefix=" + other + "/", "prefix=" + key + "/&pre%66ix=" + other + "/"} {
		sign, _, body = alice.send("GET", ep+"/warehouse?list-type=2&"+q, nil, nil, false)
		require.Equal(t, 400, sign, "%s: %s", q, body)
	}
	s3ns := "http://s3.amazonaws.com/doc/2006-03-01/"
	for name, del := range map[string]string{
		"two keys in one object": fmt.Sprintf(`<Delete><Object><Key>%s/data/copy.bin</Key><Key>%s/data/x.bin</Key></Object></Delete>`, key, other),
		"namespaced key":         fmt.Sprintf(`<Delete xmlns:s="%s"><Object><Key>%s/data/copy.bin</Key><s:Key>%s/data/x.bin</s:Key></Object></Delete>`, s3ns, key, other),
		"unknown element":        fmt.Sprintf(`<Delete><Object><Key>%s/data/copy.bin</Key></Object><Prefix>%s/</Prefix></Delete>`, key, other),
	} {
		sign, _, body = bob.send("POST", ep+"/warehouse?delete", contentMD5(del), []byte(del), true)
		require.Equal(t, 400, sign, "DeleteObjects with %s: %s", name, body)
	}

	// Within the table, spelled once: signed, and SeaweedFS accepts the
	// signature of the re-encoded copy source (a raw space and plus).
	sign, s3status, body = bob.send("PUT", ep+"/warehouse/"+key+"/data/copy.bin", map[string][]string{"x-amz-copy-source": {inside}}, nil, false)
	require.Equal(t, [2]int{200, 200}, [2]int{sign, s3status}, "%s", body)
	sign, s3status, body = alice.send("GET", ep+"/warehouse/"+key+"/data/copy.bin", nil, nil, false)
	require.Equal(t, [3]any{200, 200, "hello"}, [3]any{sign, s3status, body})
	sign, s3status, body = alice.send("GET", ep+"/warehouse?list-type=2&prefix="+key+"/data/", nil, nil, false)
	require.Equal(t, [2]int{200, 200}, [2]int{sign, s3status}, "%s", body)
	require.Contains(t, body, key+"/data/copy.bin")
	require.Contains(t, body, key+"/data/a b+c.bin")
	del := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?><Delete xmlns="%s"><Object><Key>%s/data/copy.bin</Key></Object><Object><Key>%s/data/a b+c.bin</Key></Object><Quiet>true</Quiet></Delete>`, s3ns, key, key)
	sign, s3status, body = bob.send("POST", ep+"/warehouse?delete", contentMD5(del), []byte(del), true)
	require.Equal(t, [2]int{200, 200}, [2]int{sign, s3status}, "%s", body)
	for _, o := range []string{obj, ep + "/warehouse/" + key + "/data/copy.bin"} {
		_, s3status, _ = alice.send("HEAD", o, nil, nil, false)
		require.Equal(t, 404, s3status, "%s was deleted", o)
	}
}

// tableKey returns table ns.t's location as a key in the warehouse bucket.
func tableKey(t *testing.T, b *bundle) string {
	r := b.do(t, "GET", "/v1/wh/namespaces/ns/tables/t", nil, "X-Test-Principal", "local")
	require.Equal(t, 200, r.status, "%s", r.body)
	var loaded struct {
		Metadata struct {
			Location string `json:"location"`
		} `json:"metadata"`
	}
	require.NoError(t, json.Unmarshal(r.body, &loaded))
	return strings.TrimPrefix(loaded.Metadata.Location, "s3://warehouse/")
}

// contentMD5 is the header S3 requires on a DeleteObjects body.
func contentMD5(body string) map[string][]string {
	sum := md5.Sum([]byte(body))
	return map[string][]string{"Content-MD5": {base64.StdEncoding.EncodeToString(sum[:])}, "Content-Type": {"application/xml"}}
}
