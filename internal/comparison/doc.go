// Package comparison measures the service as a user runs it (mailmigrate
// serve, driven through its API) and its copy engine (internal/transfer)
// against the tools an operator would otherwise reach for — mbsync from
// Debian's isync, and Dovecot's own doveadm backup over imapc — on two
// corpora (few large and many small mailboxes), the same real Dovecot
// servers and the same parallelism, and checks how faithfully each copied.
//
// It holds only a benchmark, BenchmarkCompareTools, and its helpers, all in
// test files: nothing of it is linked into the service. Run it with
//
//	go test -run '^$' -bench CompareTools -benchtime 1x ./internal/comparison
//
// and MAILMIGRATE_BENCH_SCALE=0.1 for corpora a tenth the size.
package comparison
