package service

import (
	"context"

	"github.com/lakehold/catalog/service/v4commits"
)

// The snapshots of v4 tables are committed by v4commits.Committer (files,
// column files, compaction); these names and methods keep the service's
// API whole.

// FormatV4 is the table format version whose snapshots point at v4 root
// manifests and whose data can carry column files.
const FormatV4 = v4commits.FormatV4

// v4 commit types (package v4commits).
type (
	DataFileInput       = v4commits.DataFileInput
	FilesCommit         = v4commits.FilesCommit
	EqualityDeleteInput = v4commits.EqualityDeleteInput
	DeletionVectorInput = v4commits.DeletionVectorInput
	ColumnFileInput     = v4commits.ColumnFileInput
	ColumnFilesCommit   = v4commits.ColumnFilesCommit
	CompactionRewrite   = v4commits.CompactionRewrite
	CompactionCommit    = v4commits.CompactionCommit
	CompactOptions      = v4commits.CompactOptions
	CompactionReport    = v4commits.CompactionReport
)

// CommitFiles adds and removes whole files of a v4 table (v4commits.Committer.CommitFiles).
func (s *Service) CommitFiles(ctx context.Context, warehouse string, c FilesCommit) (*TableResult, error) {
	return v4Result(s.v4.CommitFiles(ctx, warehouse, c))
}

// CommitColumnFiles commits column files of a v4 table (v4commits.Committer.CommitColumnFiles).
func (s *Service) CommitColumnFiles(ctx context.Context, warehouse string, c ColumnFilesCommit) (*TableResult, error) {
	return v4Result(s.v4.CommitColumnFiles(ctx, warehouse, c))
}

// CommitCompaction commits rewritten bases (v4commits.Committer.CommitCompaction).
func (s *Service) CommitCompaction(ctx context.Context, warehouse string, c CompactionCommit) (*TableResult, error) {
	return v4Result(s.v4.CommitCompaction(ctx, warehouse, c))
}

// v4Result is the TableResult of a v4 commit's result.
func v4Result(r *v4commits.Result, err error) (*TableResult, error) {
	if err != nil {
		return nil, err
	}
	return &TableResult{MetadataLocation: r.MetadataLocation, Metadata: r.Metadata, Config: map[string]string{}}, nil
}
