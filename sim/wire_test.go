package sim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"
)

// TestReqBaseFirst checks the layout wire relies on: every struct of the
// package that embeds reqBase, or a type that does, embeds it as its
// first field, so that a request's reqBase lies at the address its
// interface value holds. It reads the package's source, so a request
// type added later is checked without being listed here.
func TestReqBaseFirst(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	structs := map[string]*ast.StructType{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if st, ok := ts.Type.(*ast.StructType); ok {
					structs[ts.Name.Name] = st
				}
			}
			return true
		})
	}
	embedded := func(f *ast.Field) string {
		if len(f.Names) > 0 {
			return ""
		}
		x := f.Type
		if s, ok := x.(*ast.StarExpr); ok {
			x = s.X
		}
		if id, ok := x.(*ast.Ident); ok {
			return id.Name
		}
		return ""
	}
	// bases: reqBase and every struct that embeds a base (at any place:
	// misplaced ones are reported below), to a fixed point.
	bases := map[string]bool{"reqBase": true}
	for grew := true; grew; {
		grew = false
		for name, st := range structs {
			for _, f := range st.Fields.List {
				if e := embedded(f); bases[e] && !bases[name] {
					bases[name], grew = true, true
				}
			}
		}
	}
	n := 0
	for name, st := range structs {
		for i, f := range st.Fields.List {
			if e := embedded(f); bases[e] {
				n++
				if _, ptr := f.Type.(*ast.StarExpr); i != 0 || ptr {
					t.Errorf("%s embeds %s as field %d (pointer %v): wire needs reqBase at offset 0, embedded by value", name, e, i, ptr)
				}
			}
		}
	}
	if n < 12 { // the request types when this test was written
		t.Fatalf("found %d structs embedding reqBase, want at least 12: is the source read?", n)
	}
	// and the offsets of the commonest, as the compiler laid them out
	for name, off := range map[string]uintptr{
		"popReq": unsafe.Offsetof(popReq{}.reqBase), "ackReq": unsafe.Offsetof(ackReq{}.reqBase),
		"receiveReq": unsafe.Offsetof(receiveReq{}.reqBase), "changeReq": unsafe.Offsetof(changeReq{}.reqBase),
	} {
		if off != 0 {
			t.Errorf("%s's reqBase at offset %d, want 0", name, off)
		}
	}
}

// TestWireBase checks wire's reqBase against base's for each RocketMQ
// request type.
func TestWireBase(t *testing.T) {
	for _, r := range []Request{&popReq{}, &ackReq{}, &receiveReq{}, &changeReq{}, &pullReq{}} {
		p, b := wire(r)
		if b != r.base() {
			t.Errorf("%T: wire's base %p, base() %p", r, b, r.base())
		}
		if p != payload(r) {
			t.Errorf("%T: wire's payload is not the request", r)
		}
	}
}
