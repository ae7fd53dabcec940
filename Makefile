.PHONY: run build wheel check test interop generate check-generate bench bench-peers bench-ab bench-column-updates fmt

# Run the catalog on the embedded default (SQLite + local warehouse in ./data).
run:
	go run ./cmd/catalog serve

build:
	go build -o bin/catalog ./cmd/catalog

# A platform wheel of clients/python with the catalog binary inside, into
# dist/: `pip install dist/lakehold-*.whl` then lakehold.local("./lake")
# runs a catalog with nothing else installed (scripts/wheel.sh).
wheel:
	scripts/wheel.sh dist

# Every test: the Go tier, then real clients against the binary, whose
# installs download in the background during the Go tier
# (scripts/check.sh). This is the README's test command and what .ci/run
# runs.
check:
	scripts/check.sh

# Go tier: generated-code drift check and every Go test; starts a throwaway
# Postgres and SeaweedFS itself.
test:
	scripts/test.sh

generate:
	cd openapi && go generate ./...

check-generate:
	scripts/check-generate.sh

# Interop tier: PyIceberg, DuckDB, Spark, the Java REST compatibility kit and
# iceberg-go against the built binary on a throwaway Postgres.
interop:
	integration/run.sh

# Benchmarks on Postgres (throwaway cluster) and SQLite.
bench:
	scripts/bench.sh

# Side by side with the Iceberg Java REST fixture, with the Postgres
# ceiling from pgbench; not part of check (README, "Benchmarks").
bench-peers:
	scripts/bench-peers.sh

# CPU per operation of revision OLD against the work tree (README,
# "Benchmarks"): make bench-ab OLD=main
bench-ab:
	scripts/bench-ab.sh $(OLD)

# Write amplification of a column refresh: copy-on-write vs column files vs
# Lance; not part of check (README, "Benchmarks"). ARGS go to bench.py.
bench-column-updates:
	scripts/bench-column-updates.sh $(ARGS)

fmt:
	gofmt -w $$(git ls-files '*.go')
