package catalog

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Catalog is the documented surface of a workspace: its services and
// events, each sorted by key or name.
type Catalog struct {
	Services []*Service
	Events   []*Event
}

// Service is a type marked //catalog:service KEY: an exported interface
// (an abstract seam, implemented elsewhere) or an exported struct (a
// concrete service, whose exported methods are its surface).
type Service struct {
	Key      string
	Name     string // the type's name, e.g. "Executor"
	Abstract bool   // an interface
	Doc      string // the doc comment's text, directives removed
	Decl     string // "type Executor interface" or "type Executor struct"
	Embeds   []string
	Methods  []*Method
	Types    []TypeRef // the types the methods take and return (see typeSet)
	Files    []string  // root-relative declaring files: the type's first
	Line     int
	docs     *docContext
}

// Method is one method of a service.
type Method struct {
	Name string
	Doc  string
	Sig  string // "Run(ctx context.Context, spec Spec) (RunResult, error)", or with "func (recv) " for a struct
	File string
	Line int
}

// Event is a func type or an interface method marked
// //catalog:event SCOPE/NAME with a //catalog:mode.
type Event struct {
	Name   string // "scope/name"
	Mode   string
	GoName string // "Middleware", or "Hooks.OnDone" for an interface method
	Doc    string
	Sig    string // "type Middleware func(…) Result" or "func (Hooks) OnDone(…)"
	Types  []TypeRef
	File   string
	Line   int
	docs   *docContext
}

// Scope is the part of the event's name before the first slash.
func (e *Event) Scope() string { s, _, _ := strings.Cut(e.Name, "/"); return s }

// docContext is what rendering a doc comment needs to resolve its doc
// links: the declaring package and the names its file imports.
type docContext struct {
	pkg     *types.Package
	imports map[string]string // local name → import path
}

// violation is one broken completeness rule, at the declaration (or the
// directive) that breaks it.
type violation struct {
	Path    string
	Line    int
	Kind    string // service, method, event, directive
	Name    string
	Problem string
}

// extractor walks the packages of a workspace.
type extractor struct {
	root  string
	cat   Catalog
	viols []violation
}

func (x *extractor) violate(fset *token.FileSet, pos token.Pos, kind, name, format string, args ...any) {
	p := fset.Position(pos)
	x.viols = append(x.viols, violation{
		Path: x.rel(p.Filename), Line: p.Line, Kind: kind, Name: name,
		Problem: fmt.Sprintf(format, args...),
	})
}

func (x *extractor) rel(filename string) string {
	if r, err := filepath.Rel(x.root, filename); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return filepath.ToSlash(filename)
}

// typeSite is a type declaration with its doc comment.
type typeSite struct {
	file *ast.File
	spec *ast.TypeSpec
	doc  *ast.CommentGroup
}

// pkg walks one type-checked package.
func (x *extractor) pkg(p *packages.Package) {
	fset := p.Fset
	allowed := map[*ast.CommentGroup]bool{} // doc comments that may hold directives
	var sites []typeSite
	methods := map[string]map[string]*ast.FuncDecl{} // receiver type → method → decl
	fileOf := map[*ast.FuncDecl]*ast.File{}
	for _, f := range p.Syntax {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				if d.Tok != token.TYPE {
					continue
				}
				for _, s := range d.Specs {
					ts := s.(*ast.TypeSpec)
					doc := ts.Doc
					if doc == nil && !d.Lparen.IsValid() {
						doc = d.Doc
					}
					allowed[doc] = true
					if it, ok := ts.Type.(*ast.InterfaceType); ok {
						for _, m := range it.Methods.List {
							allowed[m.Doc] = true
						}
					}
					sites = append(sites, typeSite{file: f, spec: ts, doc: doc})
				}
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) == 0 {
					continue
				}
				recv := recvName(d.Recv.List[0].Type)
				if methods[recv] == nil {
					methods[recv] = map[string]*ast.FuncDecl{}
				}
				methods[recv][d.Name.Name] = d
				fileOf[d] = f
			}
		}
	}
	delete(allowed, nil)
	for _, f := range p.Syntax {
		for _, g := range f.Comments {
			if allowed[g] {
				continue
			}
			for _, d := range directives(g) {
				x.violate(fset, d.Pos.Pos(), "directive", "catalog:"+d.Key,
					"not part of the doc comment of a type or an interface method (directives go in the comment right above the declaration, with no blank line)")
			}
		}
	}
	for _, s := range sites {
		x.typeDecl(p, s, methods, fileOf)
	}
}

// recvName returns the type name of a method receiver expression.
func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// marks is what the directives of one doc comment ask for.
type marks struct {
	service, event, mode string
	// badEvent and badMode say that an event or mode directive was
	// present but invalid (and reported), so its absence is not.
	badEvent, badMode bool
}

// parseMarks validates the directives of doc and returns what they mark.
// what names the declaration for messages ("type Executor").
func (x *extractor) parseMarks(fset *token.FileSet, doc *ast.CommentGroup) marks {
	var m marks
	seen := map[string]bool{}
	if doc != nil {
		for _, c := range doc.List {
			// A misspelt directive is reported by the syntax scan; it may
			// be the event a mode belongs to.
			if kind, _, ok := classify(c.Text); ok && kind != shapeDirective {
				m.badEvent = true
			}
		}
	}
	for _, d := range directives(doc) {
		pos := d.Pos.Pos()
		name := "catalog:" + d.Key
		if d.Key == "" {
			x.violate(fset, pos, "directive", "catalog:", "missing key; want catalog:service, catalog:event or catalog:mode")
			continue
		}
		switch d.Key {
		case keyService, keyEvent, keyMode:
		default:
			hint := ""
			if s := nearest(d.Key, []string{keyService, keyEvent, keyMode}); s != "" {
				hint = fmt.Sprintf(" (did you mean catalog:%s?)", s)
			}
			x.violate(fset, pos, "directive", name, "unknown key %q%s; want catalog:service, catalog:event or catalog:mode", d.Key, hint)
			continue
		}
		if seen[d.Key] {
			x.violate(fset, pos, "directive", name, "repeated in the same doc comment")
			continue
		}
		seen[d.Key] = true
		if len(d.Args) != 1 {
			what := map[string]string{keyService: "a service key such as bash/executor", keyEvent: "an event name scope/name such as tools/execute", keyMode: "a mode: " + modeList()}[d.Key]
			x.violate(fset, pos, "directive", name, "want exactly one argument, %s; got %d", what, len(d.Args))
			m.badEvent = m.badEvent || d.Key == keyEvent
			m.badMode = m.badMode || d.Key == keyMode
			continue
		}
		arg := d.Args[0]
		switch d.Key {
		case keyService:
			if !validKey(arg) {
				x.violate(fset, pos, "directive", name, "invalid key %q; want lower-case words of letters, digits and hyphens separated by slashes, such as bash/executor", arg)
				continue
			}
			m.service = arg
		case keyEvent:
			if !validEventName(arg) {
				x.violate(fset, pos, "directive", name, "invalid event name %q; want scope/name in lower-case words of letters, digits and hyphens, such as tools/execute", arg)
				m.badEvent = true
				continue
			}
			m.event = arg
		case keyMode:
			if !validMode(arg) {
				hint := ""
				if s := nearest(arg, Modes); s != "" {
					hint = fmt.Sprintf(" (did you mean %s?)", s)
				}
				x.violate(fset, pos, "directive", name, "unknown mode %q%s; want %s", arg, hint, modeList())
				m.badMode = true
				continue
			}
			m.mode = arg
		}
	}
	return m
}

// nearest returns the candidate within edit distance 2 of s, or "".
func nearest(s string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// firstDirective returns the position of the first directive with key in
// doc, or the doc's position.
func firstDirective(doc *ast.CommentGroup, key string) token.Pos {
	for _, d := range directives(doc) {
		if d.Key == key {
			return d.Pos.Pos()
		}
	}
	return doc.Pos()
}

func (x *extractor) typeDecl(p *packages.Package, s typeSite, methods map[string]map[string]*ast.FuncDecl, fileOf map[*ast.FuncDecl]*ast.File) {
	fset := p.Fset
	ts := s.spec
	m := x.parseMarks(fset, s.doc)
	goName := p.Name + "." + ts.Name.Name
	docs := &docContext{pkg: p.Types, imports: fileImports(p, s.file)}

	if it, ok := ts.Type.(*ast.InterfaceType); ok {
		x.interfaceMethodEvents(p, s, it, docs)
	}
	if (m.mode != "" || m.badMode) && m.event == "" && !m.badEvent {
		x.violate(fset, firstDirective(s.doc, keyMode), "directive", "catalog:mode", "only an event has a mode; add //catalog:event SCOPE/NAME or remove the mode")
	}
	if m.service != "" && m.event != "" {
		x.violate(fset, firstDirective(s.doc, keyEvent), "directive", "catalog:event", "%s is already marked catalog:service; a declaration is a service or an event, not both", goName)
		return
	}
	switch {
	case m.service != "":
		x.service(p, s, m.service, methods, fileOf, docs)
	case m.event != "":
		x.funcTypeEvent(p, s, m, docs)
	}
}

func (x *extractor) service(p *packages.Package, s typeSite, key string, methods map[string]map[string]*ast.FuncDecl, fileOf map[*ast.FuncDecl]*ast.File, docs *docContext) {
	fset := p.Fset
	ts := s.spec
	goName := p.Name + "." + ts.Name.Name
	pos := firstDirective(s.doc, keyService)
	if !ts.Name.IsExported() {
		x.violate(fset, pos, "directive", "catalog:service", "%s is not exported; only an exported interface or struct can be a service", goName)
		return
	}
	if ts.Assign.IsValid() {
		x.violate(fset, pos, "directive", "catalog:service", "%s is an alias; mark the type it stands for", goName)
		return
	}
	obj, _ := p.Types.Scope().Lookup(ts.Name.Name).(*types.TypeName)
	if obj == nil {
		x.violate(fset, ts.Name.Pos(), "service", goName, "the type checker has no type %s", ts.Name.Name)
		return
	}
	svc := &Service{
		Key: key, Name: ts.Name.Name, docs: docs,
		Files: []string{x.rel(fset.Position(ts.Pos()).Filename)},
		Line:  fset.Position(ts.Name.Pos()).Line,
	}
	svc.Doc = docText(s.doc)
	x.checkDoc(fset, ts.Name.Pos(), "service", goName, ts.Name.Name, svc.Doc, true)
	qual := qualifier(p.Types)
	tparams := ""
	if ts.TypeParams != nil {
		tparams = typeParams(obj.Type().(*types.Named).TypeParams(), qual)
	}
	used := &typeSet{self: obj, qual: qual}
	switch t := ts.Type.(type) {
	case *ast.InterfaceType:
		svc.Abstract = true
		svc.Decl = "type " + ts.Name.Name + tparams + " interface"
		iface := obj.Type().Underlying().(*types.Interface)
		for _, f := range t.Methods.List {
			if len(f.Names) == 0 {
				svc.Embeds = append(svc.Embeds, types.ExprString(f.Type))
				continue
			}
			name := f.Names[0]
			if !name.IsExported() {
				continue
			}
			// An event's doc and signature are checked as an event's.
			isEvent := slices.ContainsFunc(directives(f.Doc), func(d directive) bool { return d.Key == keyEvent })
			fn := explicitMethod(iface, name.Name)
			if fn == nil {
				continue
			}
			sig := fn.Type().(*types.Signature)
			used.addSignature(sig)
			mname := goName + "." + name.Name
			doc := docText(withoutDirectives(f.Doc))
			svc.Methods = append(svc.Methods, &Method{
				Name: name.Name, Doc: doc,
				Sig:  name.Name + signature(sig, qual),
				File: x.rel(fset.Position(name.Pos()).Filename), Line: fset.Position(name.Pos()).Line,
			})
			if !isEvent && x.checkDoc(fset, name.Pos(), "method", mname, name.Name, doc, false) {
				x.checkSignature(fset, name.Pos(), "method", mname, doc, sig, false)
			}
		}
	case *ast.StructType:
		svc.Decl = "type " + ts.Name.Name + tparams + " struct"
		named := obj.Type().(*types.Named)
		for i := range named.NumMethods() {
			fn := named.Method(i)
			if !fn.Exported() {
				continue
			}
			fd := methods[ts.Name.Name][fn.Name()]
			if fd == nil {
				continue
			}
			sig := fn.Type().(*types.Signature)
			used.addSignature(sig)
			mname := goName + "." + fn.Name()
			doc := docText(withoutDirectives(fd.Doc))
			file := x.rel(fset.Position(fd.Pos()).Filename)
			svc.Methods = append(svc.Methods, &Method{
				Name: fn.Name(), Doc: doc,
				Sig:  "func " + receiver(sig.Recv(), qual) + fn.Name() + signature(sig, qual),
				File: file, Line: fset.Position(fd.Name.Pos()).Line,
			})
			if !slices.Contains(svc.Files, file) {
				svc.Files = append(svc.Files, file)
			}
			if x.checkDoc(fset, fd.Name.Pos(), "method", mname, fn.Name(), doc, false) {
				x.checkSignature(fset, fd.Name.Pos(), "method", mname, doc, sig, false)
			}
		}
	default:
		x.violate(fset, pos, "directive", "catalog:service", "%s is not an interface or a struct; only an exported interface or struct can be a service", goName)
		return
	}
	svc.Types = used.sorted()
	x.cat.Services = append(x.cat.Services, svc)
}

func (x *extractor) funcTypeEvent(p *packages.Package, s typeSite, m marks, docs *docContext) {
	fset := p.Fset
	ts := s.spec
	goName := p.Name + "." + ts.Name.Name
	pos := firstDirective(s.doc, keyEvent)
	if !ts.Name.IsExported() {
		x.violate(fset, pos, "directive", "catalog:event", "%s is not exported; only an exported func type or interface method can be an event", goName)
		return
	}
	obj, _ := p.Types.Scope().Lookup(ts.Name.Name).(*types.TypeName)
	sig, _ := func() (*types.Signature, bool) {
		if obj == nil {
			return nil, false
		}
		s, ok := obj.Type().Underlying().(*types.Signature)
		return s, ok
	}()
	if _, isFunc := ts.Type.(*ast.FuncType); !isFunc || sig == nil || ts.Assign.IsValid() {
		x.violate(fset, pos, "directive", "catalog:event", "%s is not a func type; an event is a func type or an interface method", goName)
		return
	}
	qual := qualifier(p.Types)
	tparams := ""
	if ts.TypeParams != nil {
		tparams = typeParams(obj.Type().(*types.Named).TypeParams(), qual)
	}
	ev := &Event{
		Name: m.event, Mode: m.mode, GoName: ts.Name.Name, docs: docs,
		Doc:   docText(s.doc),
		Sig:   "type " + ts.Name.Name + tparams + " " + types.TypeString(sig, qual),
		Types: typesOf(obj, sig, qual),
		File:  x.rel(fset.Position(ts.Pos()).Filename), Line: fset.Position(ts.Name.Pos()).Line,
	}
	x.event(fset, ts.Name.Pos(), goName, ts.Name.Name, ev, sig, m.badMode)
}

// interfaceMethodEvents handles the directives on the methods of the
// interface of s.
func (x *extractor) interfaceMethodEvents(p *packages.Package, s typeSite, it *ast.InterfaceType, docs *docContext) {
	fset := p.Fset
	ts := s.spec
	for _, f := range it.Methods.List {
		if len(directives(f.Doc)) == 0 {
			continue
		}
		m := x.parseMarks(fset, f.Doc)
		if m.service != "" {
			x.violate(fset, firstDirective(f.Doc, keyService), "directive", "catalog:service", "marks a type, not an interface method")
		}
		if m.event == "" {
			if (m.mode != "" || m.badMode) && !m.badEvent {
				x.violate(fset, firstDirective(f.Doc, keyMode), "directive", "catalog:mode", "only an event has a mode; add //catalog:event SCOPE/NAME or remove the mode")
			}
			continue
		}
		pos := firstDirective(f.Doc, keyEvent)
		if len(f.Names) == 0 {
			x.violate(fset, pos, "directive", "catalog:event", "marks an embedded type; an event is a func type or an interface method")
			continue
		}
		name := f.Names[0]
		goName := p.Name + "." + ts.Name.Name + "." + name.Name
		if !ts.Name.IsExported() || !name.IsExported() {
			x.violate(fset, pos, "directive", "catalog:event", "%s is not exported; only an exported method of an exported interface can be an event", goName)
			continue
		}
		obj, _ := p.Types.Scope().Lookup(ts.Name.Name).(*types.TypeName)
		if obj == nil {
			continue
		}
		iface, _ := obj.Type().Underlying().(*types.Interface)
		fn := explicitMethod(iface, name.Name)
		if fn == nil {
			continue
		}
		sig := fn.Type().(*types.Signature)
		qual := qualifier(p.Types)
		ev := &Event{
			Name: m.event, Mode: m.mode, GoName: ts.Name.Name + "." + name.Name, docs: docs,
			Doc:   docText(f.Doc),
			Sig:   "func (" + ts.Name.Name + ") " + name.Name + signature(sig, qual),
			Types: typesOf(obj, sig, qual),
			File:  x.rel(fset.Position(name.Pos()).Filename), Line: fset.Position(name.Pos()).Line,
		}
		x.event(fset, name.Pos(), goName, name.Name, ev, sig, m.badMode)
	}
}

// event checks and records ev, declared as declName at pos.
func (x *extractor) event(fset *token.FileSet, pos token.Pos, goName, declName string, ev *Event, sig *types.Signature, badMode bool) {
	if ev.Mode == "" && !badMode {
		x.violate(fset, pos, "event", goName, "has no mode; add //catalog:mode %s to its doc comment", strings.Join(Modes, "|"))
	}
	if ev.Mode != "" {
		x.checkMode(fset, pos, goName, ev.Mode, sig)
	}
	if x.checkDoc(fset, pos, "event", goName, declName, ev.Doc, false) {
		// A trailing next is exempt whatever the mode: a mode it
		// contradicts is reported by checkMode.
		x.checkSignature(fset, pos, "event", goName, ev.Doc, sig, trailingNext(sig) != nil)
	}
	x.cat.Events = append(x.cat.Events, ev)
}

func explicitMethod(iface *types.Interface, name string) *types.Func {
	if iface == nil {
		return nil
	}
	for i := range iface.NumExplicitMethods() {
		if m := iface.ExplicitMethod(i); m.Name() == name {
			return m
		}
	}
	return nil
}

// fileImports maps the names file f uses for its imports to their paths.
func fileImports(p *packages.Package, f *ast.File) map[string]string {
	out := map[string]string{}
	for _, is := range f.Imports {
		path := strings.Trim(is.Path.Value, `"`)
		name := ""
		if is.Name != nil {
			name = is.Name.Name
		} else if ip := p.Imports[path]; ip != nil {
			name = ip.Name
		} else {
			name = path[strings.LastIndex(path, "/")+1:]
		}
		if name != "_" && name != "." {
			out[name] = path
		}
	}
	return out
}

// docText returns the text of doc without its directives ("" for none).
func docText(doc *ast.CommentGroup) string {
	g := withoutDirectives(doc)
	if g == nil {
		return ""
	}
	return g.Text()
}

// qualifier writes other packages by name and the declaring one not at
// all, as the declaring file does.
func qualifier(pkg *types.Package) types.Qualifier {
	return func(other *types.Package) string {
		if other == pkg {
			return ""
		}
		return other.Name()
	}
}

// signature renders sig without "func": "(params) results".
func signature(sig *types.Signature, qual types.Qualifier) string {
	var b bytes.Buffer
	types.WriteSignature(&b, sig, qual)
	return b.String()
}

func receiver(v *types.Var, qual types.Qualifier) string {
	t := types.TypeString(v.Type(), qual)
	if v.Name() == "" || v.Name() == "_" {
		return "(" + t + ") "
	}
	return "(" + v.Name() + " " + t + ") "
}

func typeParams(tps *types.TypeParamList, qual types.Qualifier) string {
	if tps == nil || tps.Len() == 0 {
		return ""
	}
	var parts []string
	for i := range tps.Len() {
		tp := tps.At(i)
		parts = append(parts, tp.Obj().Name()+" "+types.TypeString(tp.Constraint(), qual))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
