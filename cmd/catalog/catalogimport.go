package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lakehold/catalog/internal/catalogimport"
	"github.com/lakehold/catalog/internal/restclient"
)

// importAbout is the help text of `catalog import`.
const importAbout = `Registers every namespace (with its properties), table and view of another
Iceberg REST catalog (the source) into a warehouse of this catalog (the
target), by metadata location: no data or metadata file is copied or
rewritten, so the target must be able to read the source's files and the
source should stop writing to what was imported (two catalogs committing to
one table lose each other's commits). Both sides are spoken to over the
REST API; the target checks each location as it does for any client.

The source is named by --source-uri and --source-warehouse; it is signed in
to with OAuth2 client credentials (--source-credential ID:SECRET, traded at
--source-oauth2-server-uri, default SOURCE/v1/oauth/tokens, for
--source-scope) or a bearer token sent as is (--source-token), or, for AWS
Glue's Iceberg REST endpoint, its requests are signed with AWS SigV4
(--source-sigv4, --source-region, --source-signing-name, default glue) with
credentials from the AWS default chain (AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY, AWS_PROFILE and the shared files, SSO, a container
or instance role).

--uri, --warehouse, --credential and --token name the target as for
"catalog read". --namespace a,b.c imports only those namespaces and the ones
below them (their parents are created, without their tables). --dry-run reads
both catalogs and writes nothing; it checks metadata locations against the
target warehouse's location and allowed-locations when the target shows them
(GET /management/v1/warehouses/NAME), and leaves the target's other checks to
a real run.

Each namespace, table and view is one request the target applies whole or
refuses, so nothing is half imported. What the target already has is skipped
and reported, so a rerun is safe. Refused, by name, with the reason: a view
whose SQL dialect is not in --view-dialects, objects whose locations overlap
in the source, a name the target has at another metadata location, and
whatever the target refuses (a location outside the warehouse or its
allowed-locations, one overlapping an object already there). A line per item
goes to stderr as it is settled; the summary (--json: the whole report) goes
to stdout. The exit status is 1 when anything was refused. A warehouse admin
can run the same import inside the catalog (POST
/management/v1/warehouses/NAME/import, or the console's warehouse page), up
to 2000 objects at a time, though not from Glue (the route does not sign with
SigV4). A redirect to another server is not followed (the credential or
signature would go with it). A source namespace deeper than 16 levels, or a
listing still paging after 1000 pages, stops the run before anything is
written. docs/import.md shows the source flags for
Polaris, Lakekeeper, Nessie and Glue.`

// importFlags are the options of `catalog import`.
type importFlags struct {
	src                               catalogimport.Endpoint
	sigv4                             bool
	region, signingName               string
	uri, warehouse, credential, token string
	namespaces, dialects              string
	dryRun, asJSON, quiet             bool
	timeout                           time.Duration
}

func setupImport(fs *flag.FlagSet, e *cmdEnv) func([]string) error {
	var f importFlags
	fs.StringVar(&f.src.URI, "source-uri", "", "the source catalog's base URI (required)")
	fs.StringVar(&f.src.Warehouse, "source-warehouse", "", "warehouse sent to the source's /v1/config")
	fs.StringVar(&f.src.Credential, "source-credential", "", "CLIENT_ID:SECRET for the source (OAuth2 client credentials)")
	fs.StringVar(&f.src.Token, "source-token", "", "bearer token for the source, sent as is")
	fs.StringVar(&f.src.OAuth2ServerURI, "source-oauth2-server-uri", "", "the source's token endpoint (default: SOURCE/v1/oauth/tokens)")
	fs.StringVar(&f.src.Scope, "source-scope", "catalog", "OAuth2 scope asked of the source's token endpoint")
	fs.BoolVar(&f.sigv4, "source-sigv4", false, "sign the source's requests with AWS SigV4 (AWS Glue), credentials from the AWS default chain")
	fs.StringVar(&f.region, "source-region", "", "AWS region to sign for with --source-sigv4 (default: AWS_REGION or the profile's)")
	fs.StringVar(&f.signingName, "source-signing-name", restclient.DefaultSigningName, "SigV4 signing name with --source-sigv4")
	fs.StringVar(&f.uri, "uri", localCatalogURI(), "the target catalog's base URI (default: the local catalog serve's address) [CATALOG_URI]")
	fs.StringVar(&f.warehouse, "warehouse", "", "the target warehouse (default: the target's default warehouse)")
	fs.StringVar(&f.credential, "credential", "", "CLIENT_ID:SECRET of a target principal")
	fs.StringVar(&f.token, "token", "", "bearer token for the target, sent as is")
	fs.StringVar(&f.namespaces, "namespace", "", "comma-separated namespaces (levels joined by dots) to import, with those below them (default: all)")
	fs.StringVar(&f.dialects, "view-dialects", strings.Join(catalogimport.DefaultDialects, ","), "SQL dialects a view may use to be imported")
	fs.BoolVar(&f.dryRun, "dry-run", false, "read both catalogs, report what would be imported, write nothing")
	fs.BoolVar(&f.asJSON, "json", false, "print the whole report as JSON instead of the summary")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress lines on stderr")
	fs.DurationVar(&f.timeout, "timeout", time.Hour, "give up after this long")
	return func([]string) error {
		if err := f.check(); err != nil {
			return e.usagef("%s", err)
		}
		ctx, cancel := signalContext()
		defer cancel()
		ctx, cancelT := context.WithTimeout(ctx, f.timeout)
		defer cancelT()
		return f.run(ctx, e.stdout, e.stderr)
	}
}

func (f *importFlags) check() error {
	switch {
	case f.src.URI == "":
		return errors.New("import: --source-uri is required")
	case f.uri == "":
		return errors.New("import: --uri is empty")
	case f.src.Credential != "" && f.src.Token != "":
		return errors.New("import: give --source-credential or --source-token, not both")
	case f.sigv4 && (f.src.Credential != "" || f.src.Token != ""):
		return errors.New("import: --source-sigv4 takes no --source-credential or --source-token")
	case !f.sigv4 && (f.region != "" || f.signingName != restclient.DefaultSigningName):
		return errors.New("import: --source-region and --source-signing-name go with --source-sigv4")
	case f.credential != "" && f.token != "":
		return errors.New("import: give --credential or --token, not both")
	case strings.TrimSpace(f.dialects) == "":
		return errors.New("import: --view-dialects is empty")
	}
	return nil
}

// options turns the flags into the import's options.
func (f *importFlags) options(stderr io.Writer) catalogimport.Options {
	o := catalogimport.Options{DryRun: f.dryRun, Dialects: strings.Split(f.dialects, ",")}
	for _, ns := range strings.Split(f.namespaces, ",") {
		if ns = strings.TrimSpace(ns); ns != "" {
			o.Namespaces = append(o.Namespaces, strings.Split(ns, "."))
		}
	}
	if !f.quiet {
		o.Progress = func(done, total int, it catalogimport.Item) {
			fmt.Fprintf(stderr, "[%d/%d] %s %s: %s\n", done, total, it.Kind, it.FullName(), it.Status)
		}
	}
	return o
}

// run signs in to both catalogs, imports and prints the report. It
// fails when the AWS credentials or region for --source-sigv4 cannot be
// found, when a catalog cannot be reached or read, and when an item was
// refused (after printing the report).
func (f *importFlags) run(ctx context.Context, stdout, stderr io.Writer) error {
	if f.sigv4 {
		sig, err := restclient.LoadSigV4(ctx, f.region, f.signingName)
		if err != nil {
			return fmt.Errorf("import: source %s: %w", f.src.URI, err)
		}
		f.src.SigV4 = sig
	}
	src, err := catalogimport.OpenSource(ctx, f.src)
	if err != nil {
		return fmt.Errorf("import: source %s: %w", f.src.URI, err)
	}
	dst, err := catalogimport.OpenTarget(ctx, catalogimport.Endpoint{URI: f.uri, Warehouse: f.warehouse, Credential: f.credential, Token: f.token})
	if err != nil {
		return fmt.Errorf("import: target %s: %w", f.uri, err)
	}
	rep, runErr := catalogimport.Run(ctx, src, dst, f.options(stderr))
	if f.asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		rep.WriteSummary(stdout)
	}
	if runErr != nil {
		return fmt.Errorf("import: stopped: %w", runErr)
	}
	if n := len(rep.Refused()); n > 0 {
		return fmt.Errorf("import: %d item(s) refused (listed above)", n)
	}
	return nil
}
