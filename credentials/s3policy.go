package credentials

import "encoding/json"

// Access is what vended credentials may do.
type Access string

// Access levels.
const (
	Read      Access = "read"
	ReadWrite Access = "read-write"
)

type policyDoc struct {
	Version   string      `json:"Version"`
	Statement []statement `json:"Statement"`
}

type statement struct {
	Sid       string                         `json:"Sid"`
	Effect    string                         `json:"Effect"`
	Action    []string                       `json:"Action"`
	Resource  []string                       `json:"Resource"`
	Condition map[string]map[string][]string `json:"Condition,omitempty"`
}

// S3SessionPolicy returns the inline session policy for AssumeRole that
// scopes credentials to one table location: object reads (and, for
// read-write, writes, deletes and multipart uploads) under the table's key
// prefix, listing only with an s3:prefix under it, and an explicit deny of
// every sts:* and iam:* action so that the credentials cannot re-assume the
// role without the policy. partition is the AWS partition ("aws" when empty).
func S3SessionPolicy(loc Location, access Access, partition string) (string, error) {
	if partition == "" {
		partition = "aws"
	}
	arn := "arn:" + partition + ":s3:::"
	bucket := arn + loc.Bucket
	objects := bucket + "/" + loc.dir() + "*"
	actions := []string{"s3:GetObject", "s3:GetObjectVersion"}
	if access == ReadWrite {
		actions = append(actions, "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts")
	}
	listPrefixes := []string{loc.dir() + "*"}
	if loc.Prefix != "" {
		listPrefixes = []string{loc.Prefix, loc.dir() + "*"}
	}
	doc := policyDoc{Version: "2012-10-17", Statement: []statement{
		{Sid: "TableObjects", Effect: "Allow", Action: actions, Resource: []string{objects}},
		{Sid: "ListTablePrefix", Effect: "Allow", Action: []string{"s3:ListBucket"}, Resource: []string{bucket},
			Condition: map[string]map[string][]string{"StringLike": {"s3:prefix": listPrefixes}}},
		{Sid: "BucketLocation", Effect: "Allow", Action: []string{"s3:GetBucketLocation"}, Resource: []string{bucket}},
		{Sid: "NoRoleChaining", Effect: "Deny", Action: []string{"sts:*", "iam:*"}, Resource: []string{"*"}},
	}}
	b, err := json.Marshal(doc)
	return string(b), err
}
