package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	"github.com/countersign/countersign/domain"
)

// Page is one page of a list (SPEC §5): next_cursor is absent at the end.
type Page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// CursorAfter is the cursor of the page that starts after the item with
// this id (requests and grants alike).
func CursorAfter(id string) string { return base64.RawURLEncoding.EncodeToString([]byte(id)) }

// CursorID is the id a cursor this server issued starts after. Errors:
// InvalidRequest about cursor.
func CursorID(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !domain.ValidGeneratedID(string(b)) {
		return "", invalid("cursor", "not a cursor this server issued")
	}
	return string(b), nil
}

// MaxPageBytes bounds the encoded items of one list page on every surface
// (GET /v1/requests and /v1/grants, api.list and api.grants), besides the
// page's limit, so that a page fits in one bus message (8 MiB) with room
// to spare; a page always holds at least one item.
const MaxPageBytes = 4 << 20

// RequestPage is a page of requests as every surface sends it: the items
// encoded, cut at MaxPageBytes. When the bound cuts the page, NextCursor
// is the cursor after the last item kept; otherwise it is next, the
// list's own cursor.
func RequestPage(items []domain.Request, next string) (Page[json.RawMessage], error) {
	return boundPage(items, next, MaxPageBytes, func(r *domain.Request) string { return CursorAfter(string(r.ID)) })
}

// GrantPage is RequestPage for grants.
func GrantPage(items []domain.Grant, next string) (Page[json.RawMessage], error) {
	return boundPage(items, next, MaxPageBytes, func(g *domain.Grant) string { return CursorAfter(string(g.ID)) })
}

// boundPage encodes items into a page of at most maxBytes of items (and
// at least one). The items are encoded into one buffer, sized on the
// first, each item a slice of it: a buffer of its own per item, grown from
// 64 bytes, was a quarter of what a list page allocated.
func boundPage[T any](items []T, next string, maxBytes int, cursorOf func(*T) string) (Page[json.RawMessage], error) {
	p := Page[json.RawMessage]{Items: make([]json.RawMessage, 0, len(items)), NextCursor: next}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	ends := make([]int, 0, len(items)) // each item's end in buf; the next starts one byte (a newline) on
	for i := range items {
		if err := enc.Encode(&items[i]); err != nil {
			return Page[json.RawMessage]{}, err
		}
		if i > 0 && buf.Len()-len(ends)-1 > maxBytes { // the items' bytes, without their newlines
			p.NextCursor = cursorOf(&items[i-1])
			break
		}
		ends = append(ends, buf.Len()-1)
		if i == 0 && len(items) > 1 { // room for the rest, sized on the first
			buf.Grow(min(buf.Len()*(len(items)-1)*5/4, maxBytes))
		}
	}
	b, start := buf.Bytes(), 0
	for _, end := range ends {
		p.Items = append(p.Items, b[start:end:end])
		start = end + 1
	}
	return p, nil
}

// encodeJSON encodes v without HTML escaping: API JSON is read by
// programs, and escaping "<" as \u003c makes it six bytes.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
