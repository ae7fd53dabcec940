// Command facadestats measures how the service layer is wired (issue 48):
// the function-typed fields of every Deps struct under service/, the
// one-call forwarders and non-test lines of the top-level service package,
// and the rooms of 200 or more non-test lines that have no tests of their
// own. Run from the module root: go run ./scripts/facadestats. It exits 1
// when a directory cannot be read or a file does not parse.
package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "facadestats:", err)
		os.Exit(1)
	}
}

func run() error {
	entries, err := os.ReadDir("service")
	if err != nil {
		return err
	}
	var rooms []string
	for _, e := range entries {
		if e.IsDir() {
			rooms = append(rooms, filepath.Join("service", e.Name()))
		}
	}
	fields := 0
	var perRoom []string
	var untested []string
	for _, dir := range rooms {
		files, lines, tests, err := parseDir(dir)
		if err != nil {
			return err
		}
		n := depsFuncFields(files)
		fields += n
		if n > 0 {
			perRoom = append(perRoom, fmt.Sprintf("  %s: %d", dir, n))
		}
		if lines >= 200 && tests == 0 {
			untested = append(untested, fmt.Sprintf("  %s (%d lines)", dir, lines))
		}
	}
	files, lines, _, err := parseDir("service")
	if err != nil {
		return err
	}
	sort.Strings(perRoom)
	fmt.Printf("function-typed fields in Deps structs: %d\n%s\n", fields, strings.Join(perRoom, "\n"))
	fmt.Printf("one-call forwarders in package service: %d\n", forwarders(files))
	fmt.Printf("package service non-test lines: %d\n", lines)
	fmt.Printf("rooms of >= 200 lines without tests: %d\n%s\n", len(untested), strings.Join(untested, "\n"))
	return nil
}

// parseDir parses the non-test Go files of dir and returns them, their
// line count and how many test files dir has.
func parseDir(dir string) ([]*ast.File, int, int, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, 0, 0, err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	lines, tests := 0, 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			tests++
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, 0, 0, err
		}
		lines += bytes.Count(src, []byte("\n"))
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			return nil, 0, 0, err
		}
		files = append(files, f)
	}
	return files, lines, tests, nil
}

// depsFuncFields counts the function-typed fields (each name once) of the
// structs named Deps in files.
func depsFuncFields(files []*ast.File) int {
	n := 0
	for _, f := range files {
		ast.Inspect(f, func(node ast.Node) bool {
			ts, ok := node.(*ast.TypeSpec)
			if !ok || ts.Name.Name != "Deps" {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return false
			}
			for _, fld := range st.Fields.List {
				if _, ok := fld.Type.(*ast.FuncType); ok {
					n += max(1, len(fld.Names))
				}
			}
			return false
		})
	}
	return n
}

// forwarders counts the functions whose body is one statement that only
// calls another function (return f(...) or f(...)).
func forwarders(files []*ast.File) int {
	n := 0
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil || len(fn.Body.List) != 1 {
				continue
			}
			var call ast.Expr
			switch s := fn.Body.List[0].(type) {
			case *ast.ReturnStmt:
				if len(s.Results) == 1 {
					call = s.Results[0]
				}
			case *ast.ExprStmt:
				call = s.X
			}
			if _, ok := call.(*ast.CallExpr); ok {
				n++
			}
		}
	}
	return n
}
