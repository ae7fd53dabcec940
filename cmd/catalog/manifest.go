package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/lakehold/catalog/v4manifest"
)

// cmdManifest implements `catalog manifest inspect FILE`: one JSON object
// per manifest row, so a person can see what the server wrote.
func cmdManifest(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "inspect" {
		return errors.New("usage: catalog manifest inspect FILE [--table-location URI] [--metadata]")
	}
	fs := flag.NewFlagSet("manifest inspect", flag.ContinueOnError)
	fs.SetOutput(stderr)
	tableLoc := fs.String("table-location", "", "resolve relative locations against this table location")
	showMeta := fs.Bool("metadata", false, "print the file's key/value metadata first, as one JSON object")
	rest := args[1:]
	var path string
	if len(rest) > 0 && rest[0] != "" && rest[0][0] != '-' {
		path, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if path == "" && fs.NArg() > 0 {
		path = fs.Arg(0)
	}
	if path == "" {
		return errors.New("usage: catalog manifest inspect FILE")
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := v4manifest.NewReader(f, v4manifest.ReaderOptions{TableLocation: *tableLoc})
	if err != nil {
		return err
	}
	defer r.Close()
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	if *showMeta {
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
