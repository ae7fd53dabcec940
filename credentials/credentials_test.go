package credentials

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseLocation(t *testing.T) {
	l, err := ParseLocation("s3://warehouse/ns/table/")
	require.NoError(t, err)
	require.Equal(t, Location{Scheme: "s3", Bucket: "warehouse", Prefix: "ns/table"}, l)
	for _, bad := range []string{"S3://b/x", "s3:/b/x", "file:///tmp/x", "gcs://b/x", "s3:///x"} {
		_, err := ParseLocation(bad)
		require.Error(t, err, bad)
	}
}

func TestS3SessionPolicyGolden(t *testing.T) {
	l, _ := ParseLocation("s3://warehouse/ns/table")
	got, err := S3SessionPolicy(l, ReadWrite, "")
	require.NoError(t, err)
	require.JSONEq(t, `{"Version":"2012-10-17","Statement":[
	 {"Sid":"TableObjects","Effect":"Allow","Action":["s3:GetObject","s3:GetObjectVersion","s3:PutObject","s3:DeleteObject","s3:AbortMultipartUpload","s3:ListMultipartUploadParts"],"Resource":["arn:aws:s3:::warehouse/ns/table/*"]},
	 {"Sid":"ListTablePrefix","Effect":"Allow","Action":["s3:ListBucket"],"Resource":["arn:aws:s3:::warehouse"],"Condition":{"StringLike":{"s3:prefix":["ns/table","ns/table/*"]}}},
	 {"Sid":"BucketLocation","Effect":"Allow","Action":["s3:GetBucketLocation"],"Resource":["arn:aws:s3:::warehouse"]},
	 {"Sid":"NoRoleChaining","Effect":"Deny","Action":["sts:*","iam:*"],"Resource":["*"]}]}`, got)

	ro, err := S3SessionPolicy(l, Read, "aws-cn")
	require.NoError(t, err)
	var doc policyDoc
	require.NoError(t, json.Unmarshal([]byte(ro), &doc))
	require.Equal(t, []string{"s3:GetObject", "s3:GetObjectVersion"}, doc.Statement[0].Action, "read-only cannot put")
	require.Equal(t, []string{"arn:aws-cn:s3:::warehouse/ns/table/*"}, doc.Statement[0].Resource)
}

func TestGCSAccessBoundaryGolden(t *testing.T) {
	l, _ := ParseLocation("gs://warehouse/ns/table")
	rules, err := GCSAccessBoundary(l, ReadWrite)
	require.NoError(t, err)
	got, err := json.Marshal(map[string]any{"accessBoundary": map[string]any{"accessBoundaryRules": rules}})
	require.NoError(t, err)
	// The boundary recorded against a local STS stand-in (shared/reference/infra.md §2.3).
	require.JSONEq(t, `{"accessBoundary":{"accessBoundaryRules":[{"availableResource":"//storage.googleapis.com/projects/_/buckets/warehouse","availablePermissions":["inRole:roles/storage.objectAdmin"],"availabilityCondition":{"expression":"resource.name.startsWith('projects/_/buckets/warehouse/objects/ns/table/') || api.getAttribute('storage.googleapis.com/objectListPrefix', '').startsWith('ns/table/')"}}]}}`, string(got))
	ro, err := GCSAccessBoundary(l, Read)
	require.NoError(t, err)
	require.Equal(t, []string{"inRole:roles/storage.objectViewer"}, ro[0].AvailablePermissions)
	_, err = GCSAccessBoundary(Location{Scheme: "gs", Bucket: "b", Prefix: "it's"}, Read)
	require.Error(t, err, "quotes cannot be smuggled into the CEL expression")
}

func TestAllowlist(t *testing.T) {
	cfg, dropped := FilterConfig(map[string]string{
		"s3.access-key-id": "a", "s3.secret-access-key": "s", "s3.session-token": "t", "client.region": "eu-west-1",
		"s3.endpoint": "http://x", "s3.path-style-access": "true", "io-impl": "org.Custom", "s3.delete-enabled": "false",
		"s3.sse.type": "dsse-kms", "gcs.no-auth": "true", "s3.session-token-expires-at-ms": "1",
	})
	require.ElementsMatch(t, []string{"io-impl", "s3.delete-enabled", "s3.sse.type", "gcs.no-auth", "s3.session-token-expires-at-ms"}, dropped)
	require.Len(t, cfg, 6)
	cred, dropped := FilterCredential(map[string]string{"s3.session-token-expires-at-ms": "1", "client.refresh-credentials-endpoint": "v1/x"})
	require.Empty(t, dropped)
	require.Len(t, cred, 2)
	cat, dropped := FilterCatalogConfig(map[string]string{"prefix": "wh", "io-impl": "x"})
	require.Equal(t, map[string]string{"prefix": "wh"}, cat)
	require.Equal(t, []string{"io-impl"}, dropped)
}
