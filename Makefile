# mailmigrate — `make run` starts the service, `make test` runs every test.
# Both install what they need from the system (PostgreSQL server binaries)
# when it is missing.

GO       ?= go
BIN      := bin/mailmigrate
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)

.PHONY: run test bench build generate check-generated lint deps

## run: build and start the service on http://127.0.0.1:8080 (private PostgreSQL unless DATABASE_URL is set)
run: deps build
	$(BIN) serve

## test: run every test against real PostgreSQL
test: deps
	$(GO) test -race -count=1 ./...

## bench: run the Go benchmarks against real PostgreSQL
bench: deps
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 3x ./...

## build: compile bin/mailmigrate
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/mailmigrate

## generate: regenerate gen/ from api/openapi.yaml and sql/
generate:
	$(GO) tool oapi-codegen -config api/oapi-codegen.yaml api/openapi.yaml
	$(GO) tool sqlc generate

## check-generated: fail when committed generated code or go.mod is stale
check-generated: generate
	$(GO) mod tidy -diff
	@git diff --exit-code -- gen || { echo "generated code is stale: run 'make generate' and commit gen/" >&2; exit 1; }
	@test -z "$$(git status --porcelain -- gen)" || { git status --porcelain -- gen; echo "untracked generated files: run 'make generate' and commit gen/" >&2; exit 1; }

## lint: formatting and go vet
lint:
	@test -z "$$(gofmt -l $$(git ls-files -co --exclude-standard '*.go' | grep -v '^gen/'))" || { gofmt -l $$(git ls-files -co --exclude-standard '*.go' | grep -v '^gen/'); echo "gofmt needed" >&2; exit 1; }
	$(GO) vet ./...

deps:
	@.ci/system-deps postgres
