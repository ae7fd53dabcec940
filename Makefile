.PHONY: run build test interop generate check-generate bench fmt

# Run the catalog on the embedded default (SQLite + local warehouse in ./data).
run:
	go run ./cmd/catalog serve

build:
	go build -o bin/catalog ./cmd/catalog

# Every test; starts a throwaway Postgres itself.
test:
	scripts/test.sh

generate:
	cd openapi && go generate ./...

check-generate:
	scripts/check-generate.sh

# Benchmarks on Postgres (throwaway cluster) and SQLite.
interop:
	integration/run.sh

bench:
	scripts/bench.sh

fmt:
	gofmt -w $$(git ls-files '*.go')
