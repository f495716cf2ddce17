package jcs

import "errors"

// ErrNotObject: EachMember's input is no JSON object, or ends before its
// close.
var ErrNotObject = errors.New("jcs: no JSON object")

// EachMember calls fn with each top-level member of the JSON object obj,
// its key as written (escapes left in) and its value as written, until fn
// returns an error, which EachMember returns. It scans without decoding,
// for readers that need a few members of a large object they trust to be
// valid JSON (a stored record); obj that is no object, or ends before its
// close, is ErrNotObject.
func EachMember(obj []byte, fn func(key, v []byte) error) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return ErrNotObject
	}
	if i = skipSpace(obj, i+1); i < len(obj) && obj[i] == '}' {
		return nil
	}
	for ; ; i = skipSpace(obj, i+1) {
		if i >= len(obj) || obj[i] != '"' {
			return ErrNotObject
		}
		end := skipString(obj, i)
		key := obj[i+1 : max(i+1, end-1)]
		if i = skipSpace(obj, end); i >= len(obj) || obj[i] != ':' {
			return ErrNotObject
		}
		i = skipSpace(obj, i+1)
		end = skipValue(obj, i)
		if err := fn(key, obj[i:end]); err != nil {
			return err
		}
		if i = skipSpace(obj, end); i < len(obj) && obj[i] == '}' {
			return nil
		}
		if i >= len(obj) || obj[i] != ',' {
			return ErrNotObject
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the end of the string that starts at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the end of the value that starts at b[i].
func skipValue(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			if i = skipString(b, i); depth == 0 {
				return i
			}
			i--
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth <= 0 {
				return i + 1 + depth // a scalar ends at its parent's close
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return len(b)
}
