package migration

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// kindedConstructors make the package's sentinels, each of a kind.
var kindedConstructors = map[string]bool{"conflict": true, "notFound": true, "internal": true, "unavailable": true, "unauthenticated": true}

// TestEverySentinelHasAKind reads the package's source: every exported
// Err… variable is made by a constructor of a kind (or is an
// *InvalidError), so that its answer follows from its kind and none turns
// into a 500 because a list somewhere forgot it.
func TestEverySentinelHasAKind(t *testing.T) {
	t.Parallel()
	files := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(files, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for sentinel, value := range sentinels(file) {
			checked++
			if !kinded(value) {
				t.Errorf("%s (%s) is not made by conflict, notFound, unavailable or internal: give it a kind", sentinel.Name, files.Position(sentinel.Pos()))
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked %d sentinels; the package has more: is the parse right?", checked)
	}
}

// sentinels are the Err… variables of file with the expressions that make them.
func sentinels(file *ast.File) map[*ast.Ident]ast.Expr {
	found := map[*ast.Ident]ast.Expr{}
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		for i, name := range spec.Names {
			if strings.HasPrefix(name.Name, "Err") && i < len(spec.Values) {
				found[name] = spec.Values[i]
			}
		}
		return true
	})
	return found
}

func kinded(value ast.Expr) bool {
	switch v := value.(type) {
	case *ast.CallExpr:
		fun, ok := v.Fun.(*ast.Ident)
		return ok && kindedConstructors[fun.Name]
	case *ast.UnaryExpr:
		lit, ok := v.X.(*ast.CompositeLit)
		ident, isIdent := lit.Type.(*ast.Ident)
		return ok && isIdent && ident.Name == "InvalidError"
	}
	return false
}

// TestKindOfAWrappedError: the kind and the words of a sentinel survive
// wrapping; an error without a kind is internal and told whole.
func TestKindOfAWrappedError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err       error
		kind      ErrorKind
		toldWords string
	}{
		{fmt.Errorf("start pass: %w", ErrTaskRunning), KindConflict, "task is running"},
		{fmt.Errorf("task 3: %w", ErrNotFound), KindNotFound, "not found"},
		{invalid("port", "must be 1 to 65535"), KindInvalid, "port must be 1 to 65535"},
		{&DuplicateLoginError{Logins: []string{"ann"}}, KindConflict, `source_login "ann" is already in this task`},
		{errors.New("connection refused"), KindInternal, "connection refused"},
	} {
		kind, told := KindOf(tc.err)
		if kind != tc.kind || told.Error() != tc.toldWords {
			t.Errorf("KindOf(%v) = %v, %q; want %v, %q", tc.err, kind, told, tc.kind, tc.toldWords)
		}
	}
}
