package storage

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"mime"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/io/gocloud/blobfs"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Listed is one file a Walk found.
type Listed struct {
	Location string // full URI, in the scheme of the walk's root
	Size     int64
	ModTime  time.Time
}

// ErrNotListable is returned by Walk for a store whose IO cannot list.
var ErrNotListable = errors.New("this storage cannot list files")

// Walk calls fn for every file under root (a directory URI: file://,
// s3://, gs://, abfss://, wasbs://), recursively, and for nothing outside
// it. A root that does not exist walks nothing. It stops at the first
// error fn or the store returns.
//
// On a local disk only regular files count: symbolic links are neither
// followed nor reported, so a walk never leaves root through one. In an
// object store every object whose key starts with root's key and a "/" is
// a file (so walking .../t never lists a sibling .../t2), except directory
// markers: keys ending in "/", empty objects whose content type names a
// directory, and ADLS Gen2 directories (hdi_isfolder).
func (p *Provider) Walk(ctx context.Context, root string, props map[string]string, fn func(Listed) error) error {
	if err := check(root); err != nil {
		return err
	}
	fio, err := p.IcebergIO(ctx, root, props)
	if err != nil {
		return err
	}
	if b, ok := fio.(*blobfs.FileIO); ok {
		return walkBucket(ctx, b.Bucket, root, fn)
	}
	lister, ok := fio.(icebergio.ListableIO)
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

// walkBucket lists root's objects in one flat, paginated listing of its
// key prefix. The io/fs view of a gocloud bucket (which the IO's WalkDir
// walks) is not used: it reports every object as fs.ModeIrregular, costs
// an existence check and a listing per "directory", and builds each path
// by joining a parent with the last segment of a key, which misnames
// nested directory markers and keys with "//" or ".." segments. Here a
// location is always root's scheme and bucket followed by the object's
// own key, the one Delete takes back.
func walkBucket(ctx context.Context, b *blob.Bucket, root string, fn func(Listed) error) error {
	scheme, rest, _ := strings.Cut(root, "://")
	bucket, key, _ := strings.Cut(rest, "/")
	prefix := strings.TrimRight(key, "/")
	if prefix != "" {
		prefix += "/" // "ns/t/": never "ns/t2/..." nor "ns/t.parquet"
	}
	base := scheme + "://" + bucket + "/"
	it := b.List(&blob.ListOptions{Prefix: prefix})
	for {
		obj, err := it.Next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if obj.IsDir || !strings.HasPrefix(obj.Key, prefix) || strings.HasSuffix(obj.Key, "/") {
			continue
		}
		if obj.Size == 0 {
			marker, err := directoryObject(ctx, b, obj.Key)
			if gcerrors.Code(err) == gcerrors.NotFound {
				continue // deleted since it was listed
			}
			if err != nil {
				return err
			}
			if marker {
				continue
			}
		}
		if err := fn(Listed{Location: base + obj.Key, Size: obj.Size, ModTime: obj.ModTime}); err != nil {
			return err
		}
	}
}

// directoryObject reports whether the empty object key is a directory
// marker without a trailing slash, as s3fs and some other tools write:
// its content type says so.
func directoryObject(ctx context.Context, b *blob.Bucket, key string) (bool, error) {
	attrs, err := b.Attributes(ctx, key)
	if err != nil {
		return false, err
	}
	// ADLS Gen2 shows a directory to the Blob API as an empty blob with
	// metadata hdi_isfolder=true.
	for k, v := range attrs.Metadata {
		if strings.EqualFold(k, "hdi_isfolder") && strings.EqualFold(v, "true") {
			return true, nil
		}
	}
	mt, _, err := mime.ParseMediaType(attrs.ContentType)
	if err != nil {
		return false, nil // no or unparsable content type: a file
	}
	return mt == "application/x-directory" || mt == "httpd/unix-directory", nil
}
