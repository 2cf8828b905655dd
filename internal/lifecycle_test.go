package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mailmigrate/mailmigrate/internal/migration"
)

// lifecycleMoves are the storage methods that move a task's, an
// account's, a test's or a plan's state: the commands of JobStore and
// WorkStore whole, and those of the other stores that change what a
// decision reads (import, edit, delete, pause, resume, final, a
// schedule's tick, a plan).
func lifecycleMoves() map[string]bool {
	moves := map[string]bool{}
	for _, store := range []reflect.Type{reflect.TypeFor[migration.JobStore](), reflect.TypeFor[migration.WorkStore]()} {
		for m := range store.Methods() {
			moves[m.Name] = true
		}
	}
	for _, name := range []string{"SchedulesStart", "TaskFinalPass", "TaskPause", "TaskResume", "PlansRequest", "RecordPlan",
		"TaskCreate", "TaskUpdate", "TaskDelete", "AccountsAdd", "AccountUpdate", "AccountDelete", "AccountsDelete"} {
		moves[name] = true
	}
	return moves
}

// TestOnlyTheServiceMovesStates fails when code outside the domain's
// application service (migration.Service) and storage calls a method of
// storage that moves a state: HTTP handlers, workers and the background
// loops all go through the service, so that one place applies the
// lifecycle's rules. Tests may drive storage directly.
func TestOnlyTheServiceMovesStates(t *testing.T) {
	t.Parallel()
	moves := lifecycleMoves()
	if len(moves) < 20 {
		t.Fatalf("found only %d state-moving methods; did the stores' interfaces move?", len(moves))
	}
	var calls []string
	files := 0
	for _, root := range []string{".", "../cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && (path == "migration" || path == "postgres" || d.Name() == "testdata"):
				return filepath.SkipDir
			case d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go"):
				return nil
			}
			files++
			calls = append(calls, stateMovingCalls(t, path, moves)...)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files < 100 {
		t.Fatalf("read %d files; is the test run from internal/?", files)
	}
	if len(calls) > 0 {
		slices.Sort(calls)
		t.Errorf("storage's state moves called outside migration.Service (call a method of the service instead):\n%s", strings.Join(calls, "\n"))
	}
}

// stateMovingCalls lists the calls in the file at path of a method named
// in moves, as file:line and name.
func stateMovingCalls(t *testing.T, path string, moves map[string]bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	ast.Inspect(file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && moves[sel.Sel.Name] {
			calls = append(calls, fset.Position(call.Pos()).String()+": "+sel.Sel.Name)
		}
		return true
	})
	return calls
}
