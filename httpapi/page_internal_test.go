package httpapi

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
)

// writePage cuts by bytes, keeps at least one item, and points next_cursor
// after the last item written; without a cut it keeps the list's cursor.
func TestWritePage(t *testing.T) {
	type item struct{ ID, S string }
	items := []item{{"a", strings.Repeat("<", 50)}, {"b", "x"}, {"c", "y"}}
	cursorOf := func(it *item) string { return "after-" + it.ID }
	for _, tc := range []struct {
		name      string
		max       int
		wantItems int
		wantNext  string
	}{
		{"one item larger than the bound", 10, 1, "after-a"},
		{"two fit", 90, 2, "after-b"},
		{"all fit", 1000, 3, "list-cursor"},
	} {
		rec := httptest.NewRecorder()
		if err := writePage(rec, items, "list-cursor", tc.max, cursorOf); err != nil {
			t.Fatal(err)
		}
		var got struct {
			Items      []item `json:"items"`
			NextCursor string `json:"next_cursor"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s: %v: %s", tc.name, err, rec.Body)
		}
		if len(got.Items) != tc.wantItems || got.NextCursor != tc.wantNext {
			t.Errorf("%s: %d items, next %q; want %d, %q", tc.name, len(got.Items), got.NextCursor, tc.wantItems, tc.wantNext)
		}
	}
	rec := httptest.NewRecorder()
	_ = writePage(rec, []item(nil), "", MaxPageBytes, cursorOf)
	if got := strings.TrimSpace(rec.Body.String()); got != `{"items":[]}` {
		t.Errorf("empty page = %s, want {\"items\":[]}", got)
	}
}
