# mailmigrate — `make run` starts the service, `make test` runs every test.
# Both install what they need from the system when it is missing: PostgreSQL
# server binaries for both, Dovecot and Chromium for the tests, isync for
# `make bench`.

GO       ?= go
BIN      := bin/mailmigrate
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)

.PHONY: help run test fuzz bench build generate check-generated lint

## help: list the targets and what each does
help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST) | awk -F': ' '{ printf "  %-16s %s\n", $$1, $$2 }'

## run: build and start the service on http://127.0.0.1:8080, or LISTEN (make run LISTEN=127.0.0.1:9000; private PostgreSQL unless DATABASE_URL is set)
run: build
	@.ci/system-deps postgres
	$(BIN) serve $(if $(LISTEN),--listen $(LISTEN))

## test: run every test against real PostgreSQL and Dovecot servers and a real Chromium
test:
	@.ci/system-deps postgres dovecot chromium
	$(GO) test -race -count=1 ./...

## fuzz: run every fuzz target (func Fuzz... in a _test.go file) for FUZZTIME, from its committed seed corpus in testdata/fuzz
# A count, not a duration: Go 1.26's fuzz coordinator can report a bare
# "context deadline exceeded" at the end of a -fuzztime duration (golang/go#75804,
# fixed in Go 1.27). 1000 inputs take each target 1–3 s here (the JSON
# targets go through the router and the database).
FUZZTIME ?= 1000x
fuzz:
	@set -e; for file in $$(git ls-files -co --exclude-standard '*_test.go' | xargs grep -l '^func Fuzz'); do \
	  for name in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$file); do \
	    echo "$(GO) test -run '^\$$' -fuzz '^$$name\$$' -fuzztime $(FUZZTIME) ./$$(dirname $$file)"; \
	    $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) ./$$(dirname $$file); \
	  done; \
	done

## bench: run the Go benchmarks against real PostgreSQL, a folder of a million messages (≈10 min), 2 000 small accounts copied and re-run by the service, mbsync and doveadm, 16 at a time (≈9 min), then compare the service (through its API) and the copy engine with mbsync and doveadm on few large and many small mailboxes (≈5 min); not the operator's day behind a login penalty (≈2 h, docs/development.md)
bench:
	@.ci/system-deps postgres dovecot isync
	$(GO) test -run '^$$' -bench . -skip 'CompareTools|MillionMessage|ManyAccounts|OperatorsDay' -benchmem -benchtime 3x ./...
	$(GO) test -run '^$$' -bench MillionMessage -benchtime 1x -timeout 60m -v ./internal/transfer
	$(GO) test -run '^$$' -bench ManyAccounts -benchtime 1x -timeout 60m ./internal/comparison
	$(GO) test -run '^$$' -bench CompareTools -benchtime 1x -timeout 60m ./internal/comparison

## build: compile bin/mailmigrate
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/mailmigrate

## generate: regenerate gen/ from api/openapi.yaml and sql/, and the front end's enums.js from api/openapi.yaml
generate:
	$(GO) tool oapi-codegen -config api/oapi-codegen.yaml api/openapi.yaml
	$(GO) tool sqlc generate
	$(GO) run ./internal/web/enumsgen internal/web/assets/enums.js

## check-generated: fail when committed generated code (gen/, enums.js) or go.mod is stale
check-generated: generate
	$(GO) mod tidy -diff
	@git diff --exit-code -- gen internal/web/assets/enums.js || { echo "generated code is stale: run 'make generate' and commit it" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- gen internal/web/assets/enums.js)" || { git status --porcelain -- gen internal/web/assets/enums.js; echo "untracked generated files: run 'make generate' and commit them" >&2; exit 1; }

## lint: formatting, go vet, staticcheck, sqlc vet (the rules in sqlc.yaml) and govulncheck (skipped, saying so, when vuln.go.dev is unreachable)
lint:
	@test -z "$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go' | grep -v '^gen/'))" || { gofmt -l $$(git ls-files -co --exclude-standard '*.go' | grep -v '^gen/'); echo "gofmt needed" >&2; exit 1; }
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	$(GO) tool sqlc vet
	@GO=$(GO) .ci/govulncheck
