package postgres_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// BenchmarkImportAccounts100k imports a 100 000-row CSV into a new task
// through the service: parse, validate, check duplicates, seal 200 000
// passwords, COPY.
func BenchmarkImportAccounts100k(b *testing.B) {
	store, _, _ := newStore(b)
	service := migration.NewService(store)
	var csv bytes.Buffer
	csv.WriteString("source_login,source_password,destination_login,destination_password\n")
	for i := range migration.MaxImportRows {
		fmt.Fprintf(&csv, "user%06d@old.example,Pw-%d-secret,user%06d@new.example,Dst-%d-secret\n", i, i, i, i)
	}
	b.SetBytes(int64(csv.Len()))
	b.ReportAllocs()
	for b.Loop() {
		task := addTask(b, store)
		created, err := service.ImportAccounts(context.Background(), task, csv.Bytes())
		if err != nil || created != migration.MaxImportRows {
			b.Fatalf("imported %d: %v", created, err)
		}
	}
}
