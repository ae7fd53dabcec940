package main

import (
	"flag"
	"fmt"
	"strings"
)

// storageNote closes the general help: the flags most commands share.
const storageNote = `
Storage flags (serve, migrate, warehouse, principal, role, maintain, compact),
each with an environment variable:
  --data-dir DIR         CATALOG_DATA_DIR      embedded mode: SQLite file and the
                                               default warehouse live here (default ./data)
  --database-url URL     CATALOG_DATABASE_URL  use Postgres instead of SQLite
`

// onAbout explains the securables of role grant and revoke.
const onAbout = `The privileges (table-read-data, manage-grants, ...) are listed in
docs/access.md. A privilege granted on a container applies to everything in it.`

// rootCommand is set by init: the table refers to functions that refer
// to it (help, completion).
var rootCommand *command

func init() { rootCommand = commandTable().link() }

// commandTable is every command of the catalog binary. Help, completion and
// the test that walks every command read it.
func commandTable() *command {
	return &command{
		name:    "catalog",
		summary: "catalog: an Apache Iceberg REST catalog (Postgres or embedded SQLite).",
		subs: []*command{
			{
				name: "serve", nargs: 0, setup: setupServe,
				summary: "run the REST catalog and its console (/ui/)",
				about: `Serves the Iceberg REST API under /v1, the management API under /management/v1,
the console under /ui/, /healthz, /readyz and /metrics. Without --database-url
it runs embedded: SQLite and a warehouse named "default" under --data-dir.
Every flag has an environment variable, named in brackets. Logs are JSON lines
on stderr (--log-level): a start line, and one "request" line per request
with its request_id (the error_type and error_reason of a 4xx or 5xx).`,
				examples: []string{
					"serve",
					"serve --database-url 'postgres://catalog@db:5432/catalog' --warehouse lake=s3://bucket/lake --auth on --listen 0.0.0.0:8181",
				},
			},
			{
				name: "worker", nargs: 0, setup: setupWorker,
				summary: "run background jobs only (no API), for a split deployment",
				about: `Runs the job workers of serve without the API: purges after a drop with purge,
and the other background jobs every replica enqueues in the catalog database.
Any number of workers and serve replicas share one database; each job runs on
one of them at a time, and a job whose replica died runs again on another once
--job-timeout plus one minute has passed. Serve replicas run jobs too unless
started with --workers 0. Takes serve's flags; --listen serves only /healthz,
/readyz and /metrics.`,
				examples: []string{
					"worker --database-url 'postgres://catalog@db:5432/catalog' --workers 8",
				},
			},
			{
				name: "migrate", nargs: 0, setup: setupMigrate,
				summary:  "apply the database migrations and exit",
				examples: []string{"migrate --database-url 'postgres://catalog@db:5432/catalog'"},
			},
			{
				name:    "warehouse",
				summary: "create and list warehouses, set their storage profiles",
				subs: []*command{
					{
						name: "create", args: "NAME", nargs: 1, setup: setupWarehouse("create"),
						summary:  "create a warehouse at a storage location (--location)",
						examples: []string{"warehouse create lake --location s3://bucket/lake", "warehouse create local --location file:///srv/lake --data-dir /var/lib/catalog"},
					},
					{
						name: "set-profile", args: "NAME", nargs: 1, setup: setupWarehouse("set-profile"),
						summary:  "set a warehouse's storage profile (S3 credential vending)",
						about:    "The profile is a JSON file (docs/credentials.md); its secrets are sealed with the secret key.",
						examples: []string{"warehouse set-profile lake --profile profile.json"},
					},
					{
						name: "list", nargs: 0, setup: setupWarehouse("list"),
						summary:  "list the warehouses and their locations",
						examples: []string{"warehouse list", "warehouse list --database-url \"$CATALOG_DATABASE_URL\""},
					},
				},
			},
			{
				name:    "principal",
				summary: "built-in service principals (the secret is shown once)",
				subs: []*command{
					{
						name: "create", args: "NAME", nargs: 1, setup: setupPrincipal("create"),
						summary:  "create a principal and print its client id and secret",
						about:    "Clients sign in with credential=<client id>:<client secret>; the secret is shown only now.",
						examples: []string{"principal create spark"},
					},
					{
						name: "list", nargs: 0, setup: setupPrincipal("list"),
						summary: "list the principals (never their secrets)", examples: []string{"principal list"},
					},
					{
						name: "rotate", args: "NAME", nargs: 1, setup: setupPrincipal("rotate"),
						summary: "issue a new secret; the old one stops working", examples: []string{"principal rotate spark"},
					},
					{
						name: "delete", args: "NAME", nargs: 1, setup: setupPrincipal("delete"),
						summary: "delete a principal", examples: []string{"principal delete spark"},
					},
				},
			},
			{
				name:    "function",
				summary: "functions (SQL UDFs) served by listFunctions and loadFunction",
				subs: []*command{
					{
						name: "create", args: "NAMESPACE.NAME", nargs: 1, setup: setupFunction("create"),
						summary:  "store a function from its UDF metadata document (--metadata)",
						examples: []string{"function create --warehouse sales eu.add_one --metadata add_one.json"},
					},
					{
						name: "list", args: "NAMESPACE", nargs: 1, setup: setupFunction("list"),
						summary: "list a namespace's functions", examples: []string{"function list --warehouse sales eu"},
					},
					{
						name: "drop", args: "NAMESPACE.NAME", nargs: 1, setup: setupFunction("drop"),
						summary: "drop a function (its metadata files stay)", examples: []string{"function drop --warehouse sales eu.add_one"},
					},
				},
			},
			{
				name:    "role",
				summary: "roles, their grants and who holds them (docs/access.md)",
				subs: []*command{
					{
						name: "create", args: "NAME", nargs: 1, setup: setupRole("create"),
						summary:  "create a role",
						examples: []string{`role create analysts --description "read the sales warehouse"`},
					},
					{
						name: "list", nargs: 0, setup: setupRole("list"),
						summary: "list the roles", examples: []string{"role list"},
					},
					{
						name: "show", args: "NAME", nargs: 1, setup: setupRole("show"),
						summary: "show a role's grants and assignments", examples: []string{"role show analysts"},
					},
					{
						name: "delete", args: "NAME", nargs: 1, setup: setupRole("delete"),
						summary: "delete a role", examples: []string{"role delete analysts"},
					},
					{
						name: "grant", args: "ROLE PRIVILEGE", nargs: 2, setup: setupRole("grant"),
						summary:  "grant a privilege on a securable (--on)",
						about:    onAbout,
						examples: []string{"role grant analysts table-read-data --on namespace:sales/eu.daily", "role grant platform manage-grants --on server"},
					},
					{
						name: "revoke", args: "ROLE PRIVILEGE", nargs: 2, setup: setupRole("revoke"),
						summary:  "revoke a privilege on a securable (--on)",
						about:    onAbout,
						examples: []string{"role revoke analysts table-write-data --on table:sales/eu.daily/orders"},
					},
					{
						name: "assign", args: "ROLE ASSIGNEE", nargs: 2, setup: setupRole("assign"),
						summary:  "give a role to builtin:NAME, oidc:SUB or group:GROUP",
						examples: []string{"role assign analysts group:analysts", "role assign platform builtin:admin"},
					},
					{
						name: "unassign", args: "ROLE ASSIGNEE", nargs: 2, setup: setupRole("unassign"),
						summary:  "take a role from builtin:NAME, oidc:SUB or group:GROUP",
						examples: []string{"role unassign analysts group:analysts"},
					},
				},
			},
			{
				name:    "manifest",
				summary: "look into v4 manifests",
				subs: []*command{
					{
						name: "inspect", args: "FILE", nargs: 1, setup: setupManifestInspect,
						summary:  "print a v4 manifest as JSON lines, one per row",
						examples: []string{"manifest inspect metadata/snap-1-root.parquet --metadata", "manifest inspect leaf.parquet --table-location s3://bucket/lake/ns/t"},
					},
				},
			},
			{
				name: "maintain", args: "NAMESPACE.TABLE", nargs: 1, setup: setupMaintain,
				summary: "expire snapshots, delete the files only they used",
				about: `Runs against the database directly, as the local operator, and prints the
report as JSON. A run that was killed is resumed by the next one.`,
				examples: []string{
					"maintain sales.orders --warehouse lake --expire-older-than 72h --retain-last 5 --dry-run",
					"maintain sales.orders --warehouse lake --expire-older-than 2026-01-01T00:00:00Z",
				},
			},
			{
				name: "compact", args: "NAMESPACE.TABLE", nargs: 1, setup: setupCompact,
				summary: "fold v4 column files and deletion vectors into their base files",
				about: `Plans which base files carry too many column files or retired bytes, rewrites
each in this process and commits it, against the database directly, as the
local operator. Prints the report as JSON; fails when a picked base file could
not be folded.`,
				examples: []string{"compact sales.orders --warehouse lake --dry-run", "compact sales.orders --warehouse lake"},
			},
			{
				name: "read", args: "NAMESPACE.TABLE", nargs: 1, setup: setupRead,
				summary:  "read a table through the REST API to stdout (csv, jsonl, arrow)",
				about:    readAbout,
				examples: []string{"read --uri http://127.0.0.1:8181 sales.orders --select id,total --format csv", "read --uri https://catalog.example --credential \"$ID:$SECRET\" --warehouse lake sales.orders"},
			},
			{
				name: "import", nargs: 0, setup: setupImport,
				summary: "register another REST catalog's namespaces, tables and views here",
				about:   importAbout,
				examples: []string{
					"import --source-uri http://polaris:8181/api/catalog --source-warehouse prod --source-credential \"$ID:$SECRET\" --source-scope PRINCIPAL_ROLE:ALL --warehouse lake --dry-run",
					"import --source-uri https://glue.eu-west-1.amazonaws.com/iceberg --source-warehouse 123456789012 --source-sigv4 --source-region eu-west-1 --warehouse lake --dry-run",
				},
			},
			{
				name: "completion", args: "SHELL", nargs: 1, setup: setupCompletion,
				summary: "print a shell completion script (bash)",
				about: `The script completes commands, subcommands and each command's flags. Load it
in the current shell with: source <(catalog completion bash)
or install it for every new one, as below.`,
				examples: []string{"completion bash > /etc/bash_completion.d/catalog"},
			},
			{
				name: "version", nargs: 0, setup: setupVersion,
				summary:  "print the version, VCS revision and Go version (also --version)",
				examples: []string{"version", "--version"},
			},
			{
				name: "help", args: "[COMMAND [SUBCOMMAND]]", nargs: -1, setup: setupHelp,
				summary:  "show the usage of the catalog or of a command",
				examples: []string{"help maintain", "help warehouse create"},
			},
		},
	}
}

// setupHelp prints the help of the command its arguments name.
func setupHelp(_ *flag.FlagSet, e *cmdEnv) func([]string) error {
	return func(args []string) error {
		c := findCommand(rootCommand, args)
		if c == nil {
			return e.usagef("unknown command %q", strings.Join(args, " "))
		}
		fmt.Fprint(e.stdout, helpText(c))
		return nil
	}
}

// setupVersion prints the build's version.
func setupVersion(_ *flag.FlagSet, e *cmdEnv) func([]string) error {
	return func([]string) error {
		fmt.Fprintln(e.stdout, "catalog "+readVersion().String())
		return nil
	}
}
