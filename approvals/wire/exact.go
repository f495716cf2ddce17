package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// ExactNames checks that every object key of canon, the canonical (JCS)
// form of a body, is byte-for-byte the JSON name of a field of v's type at
// that place (SPEC §5): encoding/json folds case and Unicode ('DECISION',
// 'ſession' and a Kelvin-sign 'K' all match a field), so a body must pass
// this before it is decoded. Keys of maps, and of json.RawMessage,
// interface and json.Unmarshaler values, are free. Errors: an
// InvalidRequest refusal whose field is the first unknown key's dotted
// path.
func ExactNames(canon []byte, v any) error {
	w := nameWalker{in: canon}
	if u := w.value(shapeOf(reflect.TypeOf(v))); u != nil {
		return u.refusal()
	}
	return nil
}

// NoFoldedNames is ExactNames for a body whose other keys are ignored (a
// third party's payload, such as Slack's): only a key that encoding/json
// would fold onto a field's name without being it is refused.
func NoFoldedNames(canon []byte, v any) error {
	w := nameWalker{in: canon, open: true}
	if u := w.value(shapeOf(reflect.TypeOf(v))); u != nil {
		return u.refusal()
	}
	return nil
}

// shape is what ExactNames knows of a Go type: a struct's field names,
// the elements of a slice or map, or nothing (free).
type shape struct {
	fields map[string]*shape // a struct: its JSON names
	elem   *shape            // a slice, an array or a map
	dict   bool              // a map: keys are free
}

var (
	shapes          sync.Map // reflect.Type -> *shape
	freeShape       = &shape{}
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// shapeOf returns t's shape, built once per type.
func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	s := buildShape(t, map[reflect.Type]*shape{})
	shapes.Store(t, s)
	return s
}

func buildShape(t reflect.Type, seen map[reflect.Type]*shape) *shape {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || reflect.PointerTo(t).Implements(unmarshalerType) {
		return freeShape
	}
	if s := seen[t]; s != nil {
		return s
	}
	switch t.Kind() {
	case reflect.Struct:
		s := &shape{fields: map[string]*shape{}}
		seen[t] = s
		addFields(s, t, seen)
		return s
	case reflect.Slice, reflect.Array:
		return &shape{elem: buildShape(t.Elem(), seen)}
	case reflect.Map:
		return &shape{elem: buildShape(t.Elem(), seen), dict: true}
	}
	return freeShape
}

// addFields adds the JSON names of t's fields to s as encoding/json reads
// them: the tag's name or the Go name, "-" skipped, the fields of an
// untagged embedded struct promoted unless a shallower field has the name.
func addFields(s *shape, t reflect.Type, seen map[reflect.Type]*shape) {
	var embedded []reflect.Type
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			embedded = append(embedded, ft)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		s.fields[name] = buildShape(f.Type, seen)
	}
	for _, et := range embedded {
		promoted := &shape{fields: map[string]*shape{}}
		addFields(promoted, et, seen)
		for name, fs := range promoted.fields {
			if _, ok := s.fields[name]; !ok {
				s.fields[name] = fs
			}
		}
	}
}

// folds reports whether key is a field name of s up to case and folding.
func (s *shape) folds(key []byte) bool {
	name := unescapeKey(key)
	for known := range s.fields {
		if strings.EqualFold(known, name) {
			return true
		}
	}
	return false
}

// nameWalker reads canonical JSON (no whitespace; strings escape only
// '"', '\' and control characters) against a shape.
type nameWalker struct {
	in   []byte
	pos  int
	open bool // keys that fold onto no field are skipped
}

func (w *nameWalker) value(s *shape) *unknownField {
	if w.pos >= len(w.in) {
		return nil
	}
	switch c := w.in[w.pos]; {
	case c == '{' && (s.fields != nil || s.dict):
		return w.object(s)
	case c == '[' && s.elem != nil && !s.dict:
		return w.array(s.elem)
	}
	w.skip()
	return nil
}

func (w *nameWalker) object(s *shape) *unknownField {
	w.pos++ // '{'
	for w.pos < len(w.in) && w.in[w.pos] != '}' {
		key := w.str()
		w.pos++ // ':'
		fs, known := s.elem, s.dict
		if !s.dict {
			fs, known = s.fields[string(key)]
		}
		switch {
		case !known && (!w.open || s.folds(key)):
			return &unknownField{key: key, of: s}
		case !known:
			fs = freeShape
		}
		if u := w.value(fs); u != nil {
			u.parents = append(u.parents, key)
			return u
		}
		if w.pos < len(w.in) && w.in[w.pos] == ',' {
			w.pos++
		}
	}
	w.pos++ // '}'
	return nil
}

func (w *nameWalker) array(elem *shape) *unknownField {
	w.pos++ // '['
	for w.pos < len(w.in) && w.in[w.pos] != ']' {
		if u := w.value(elem); u != nil {
			return u
		}
		if w.pos < len(w.in) && w.in[w.pos] == ',' {
			w.pos++
		}
	}
	w.pos++ // ']'
	return nil
}

// str reads the string at w.pos and returns it as written, escapes
// included.
func (w *nameWalker) str() []byte {
	start := w.pos + 1
	for w.pos = start; ; w.pos++ {
		i := bytes.IndexByte(w.in[w.pos:], '"')
		if i < 0 {
			w.pos = len(w.in)
			return w.in[start:]
		}
		w.pos += i
		if escaped(w.in[start:w.pos]) {
			continue
		}
		w.pos++ // past the closing '"'
		return w.in[start : w.pos-1]
	}
}

// escaped reports whether s ends in an odd run of backslashes, escaping
// the quote that follows it.
func escaped(s []byte) bool {
	n := 0
	for i := len(s) - 1; i >= 0 && s[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// skip passes over one value of any kind.
func (w *nameWalker) skip() {
	depth := 0
	for w.pos < len(w.in) {
		switch w.in[w.pos] {
		case '"':
			w.str()
			if depth == 0 {
				return
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return
			}
			if depth--; depth == 0 {
				w.pos++
				return
			}
		case ',':
			if depth == 0 {
				return
			}
		}
		w.pos++
	}
}

// unknownField is a key that is no field's name: key, a field of of, in
// the objects under parents (innermost first), as written in the
// canonical form.
type unknownField struct {
	key     []byte
	of      *shape
	parents [][]byte
}

// refusal is the InvalidRequest about u, naming the field it was probably
// meant to be when it differs only by case or folding.
func (u *unknownField) refusal() error {
	field := unescapeKey(u.key)
	name := field
	for _, p := range u.parents {
		field = unescapeKey(p) + "." + field
	}
	for known := range u.of.fields {
		if strings.EqualFold(known, name) {
			return invalid(field, "unknown field %q: field names are exact (%q is not %q)", field, name, known)
		}
	}
	return invalid(field, "unknown field %q", field)
}

// unescapeKey is the key as it was meant: the canonical form escapes
// control characters, quotes and backslashes.
func unescapeKey(key []byte) string {
	name := string(key)
	if bytes.IndexByte(key, '\\') >= 0 {
		_ = json.Unmarshal([]byte(`"`+name+`"`), &name)
	}
	return name
}
