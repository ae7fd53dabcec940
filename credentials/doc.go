// Package credentials builds what the catalog needs to hand out storage
// credentials scoped to one table: the S3 session policy (for STS
// AssumeRole), the GCS credential access boundary (for downscoped tokens),
// the Azure storage profile and the scope of a directory SAS,
// the allowlist of FileIO keys that every client (Java, PyIceberg,
// iceberg-rust, Comet's native writer) accepts, and the report of why a
// table would make Comet's native Parquet writer fall back. Everything here
// is pure: values in, values out. Minting credentials (STS, Google STS) is
// the vendor's job and lives beside these builders.
package credentials
