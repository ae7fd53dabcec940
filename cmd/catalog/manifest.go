package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/lakehold/catalog/v4manifest"
)

// setupManifestInspect implements `catalog manifest inspect FILE`: one
// JSON object per manifest row, so a person can see what the server wrote.
func setupManifestInspect(fs *flag.FlagSet, e *cmdEnv) func([]string) error {
	tableLoc := fs.String("table-location", "", "resolve relative locations against this table location")
	showMeta := fs.Bool("metadata", false, "print the file's key/value metadata first, as one JSON object")
	return func(args []string) error {
		return inspectManifest(args[0], *tableLoc, *showMeta, e.stdout)
	}
}

func inspectManifest(path, tableLoc string, showMeta bool, stdout io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := v4manifest.NewReader(f, v4manifest.ReaderOptions{TableLocation: tableLoc})
	if err != nil {
		return err
	}
	defer r.Close()
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	if showMeta {
		if err := enc.Encode(r.Metadata()); err != nil {
			return err
		}
	}
	return r.Each(context.Background(), func(tf *v4manifest.TrackedFile) error {
		if err := enc.Encode(tf.JSON()); err != nil {
			return fmt.Errorf("encode row: %w", err)
		}
		return nil
	})
}
