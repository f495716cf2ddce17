package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// MaxPageBytes bounds the encoded items of one list page (GET /v1/requests,
// GET /v1/grants), besides the page's limit; a page always holds at least
// one item.
const MaxPageBytes = 4 << 20

// page is the answer of a paged list, items already encoded.
type page struct {
	Items      []json.RawMessage `json:"items"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// writePage writes items as a page of at most maxBytes of items. When the
// bound cuts the page, next_cursor is cursorOf the last item written;
// otherwise it is next, the list's own cursor.
func writePage[T any](w http.ResponseWriter, items []T, next string, maxBytes int, cursorOf func(*T) string) error {
	p := page{Items: make([]json.RawMessage, 0, len(items)), NextCursor: next}
	size := 0
	for i := range items {
		b, err := encodeJSON(&items[i])
		if err != nil {
			return err
		}
		if i > 0 && size+len(b) > maxBytes {
			p.NextCursor = cursorOf(&items[i-1])
			break
		}
		size += len(b)
		p.Items = append(p.Items, b)
	}
	return writeJSON(w, http.StatusOK, p)
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
