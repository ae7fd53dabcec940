package storage

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
)

// Listed is one file a Walk found.
type Listed struct {
	Location string // full URI, in the scheme of the walk's root
	Size     int64
	ModTime  time.Time
}

// ErrNotListable is returned by Walk for a store whose IO cannot list.
var ErrNotListable = errors.New("this storage cannot list files")

// Walk calls fn for every regular file under root (a directory URI:
// file://, s3://, gs://), recursively. Symbolic links are neither followed
// nor reported, so a walk never leaves root through one. A root that does
// not exist walks nothing. It stops at the first error fn or the store
// returns.
func (p *Provider) Walk(ctx context.Context, root string, props map[string]string, fn func(Listed) error) error {
	if err := check(root); err != nil {
		return err
	}
	io, err := p.IcebergIO(ctx, root, props)
	if err != nil {
		return err
	}
	lister, ok := io.(icebergio.ListableIO)
	if !ok {
		return ErrNotListable
	}
	local := strings.HasPrefix(root, "file://")
	err = lister.WalkDir(strings.TrimSuffix(root, "/"), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && d == nil {
				return nil // the root itself is missing, or a file vanished under the walk
			}
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if d.IsDir() || d.Type()&fs.ModeSymlink != 0 || !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if local {
			path = "file://" + path
		}
		return fn(Listed{Location: path, Size: info.Size(), ModTime: info.ModTime()})
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
