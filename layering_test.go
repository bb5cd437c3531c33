package lock_test

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestLayering_callsGoOneWay checks that the package's files call each
// other in one direction only: no chain of calls leaves a file and comes
// back into it. A reader following a key from Acquire to the driver then
// enters each file once (client.go, then wait.go and attempt.go, then the
// leaves), and a new helper that calls back up shows here.
func TestLayering_callsGoOneWay(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the package from source")
	}
	calls := fileCalls(t)
	for _, from := range slices.Sorted(mapKeys(calls)) {
		t.Logf("%s -> %s", from, strings.Join(slices.Sorted(mapKeys(calls[from])), ", "))
	}
	if cycle := findCycle(calls); cycle != nil {
		var via []string
		for i := range len(cycle) - 1 {
			via = append(via, fmt.Sprintf("%s -> %s (%s)", cycle[i], cycle[i+1], strings.Join(calls[cycle[i]][cycle[i+1]], ", ")))
		}
		t.Errorf("calls go round: %s", strings.Join(via, "; "))
	}
}

// fileCalls type-checks the package's non-test files and returns, for
// each file, the other files whose functions it calls, with the names.
func fileCalls(t *testing.T) map[string]map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: make(map[*ast.Ident]types.Object), Selections: make(map[*ast.SelectorExpr]*types.Selection)}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", exportData(t))}
	pkg, err := conf.Check("github.com/distlock/lock", fset, files, info)
	if err != nil {
		t.Fatal(err)
	}
	calls := make(map[string]map[string][]string)
	for _, f := range files {
		from := filepath.Base(fset.File(f.Pos()).Name())
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			obj := callee(info, call.Fun)
			if obj == nil || obj.Pkg() != pkg {
				return true
			}
			to := filepath.Base(fset.File(obj.Pos()).Name())
			if to == from {
				return true
			}
			if calls[from] == nil {
				calls[from] = make(map[string][]string)
			}
			if !slices.Contains(calls[from][to], obj.Name()) {
				calls[from][to] = append(calls[from][to], obj.Name())
			}
			return true
		})
	}
	return calls
}

// exportData returns a lookup of the compiled export data of the
// package's dependencies, which `go list -export` finds (building them if
// need be): type-checking them from source takes several times longer.
func exportData(t *testing.T) func(path string) (io.ReadCloser, error) {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	files := make(map[string]string)
	for line := range strings.Lines(string(out)) {
		if path, file, ok := strings.Cut(strings.TrimSpace(line), "\t"); ok && file != "" {
			files[path] = file
		}
	}
	return func(path string) (io.ReadCloser, error) {
		file, ok := files[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(file)
	}
}

// callee returns the function or method a call expression names, if any.
func callee(info *types.Info, fun ast.Expr) types.Object {
	switch fun := ast.Unparen(fun).(type) {
	case *ast.Ident:
		if f, ok := info.Uses[fun].(*types.Func); ok {
			return f
		}
	case *ast.SelectorExpr:
		if sel, ok := info.Selections[fun]; ok {
			if f, ok := sel.Obj().(*types.Func); ok {
				return f
			}
			return nil
		}
		if f, ok := info.Uses[fun.Sel].(*types.Func); ok {
			return f
		}
	}
	return nil
}

// findCycle returns a cycle of the graph (its first file repeated at the
// end), or nil if there is none.
func findCycle(g map[string]map[string][]string) []string {
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[string]int)
	var path []string
	var visit func(string) []string
	visit = func(n string) []string {
		state[n] = onPath
		path = append(path, n)
		for _, m := range slices.Sorted(mapKeys(g[n])) {
			switch state[m] {
			case onPath:
				i := slices.Index(path, m)
				return append(slices.Clone(path[i:]), m)
			case unseen:
				if c := visit(m); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return nil
	}
	for _, n := range slices.Sorted(mapKeys(g)) {
		if state[n] == unseen {
			if c := visit(n); c != nil {
				return c
			}
		}
	}
	return nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
