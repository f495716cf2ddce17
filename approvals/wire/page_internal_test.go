package wire

import (
	"encoding/json"
	"strings"
	"testing"
)

// boundPage cuts by bytes, keeps at least one item, and points next_cursor
// after the last item kept; without a cut it keeps the list's cursor.
func TestBoundPage(t *testing.T) {
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
		{"two fit to the byte", 85, 2, "after-b"},
		{"one byte short of two", 84, 1, "after-a"},
		{"all fit", 1000, 3, "list-cursor"},
	} {
		p, err := boundPage(items, "list-cursor", tc.max, cursorOf)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) != tc.wantItems || p.NextCursor != tc.wantNext {
			t.Errorf("%s: %d items, next %q; want %d, %q", tc.name, len(p.Items), p.NextCursor, tc.wantItems, tc.wantNext)
		}
		for i, got := range p.Items {
			if want, _ := encodeJSON(&items[i]); string(got) != string(want) {
				t.Errorf("%s: item %d is %s, want %s", tc.name, i, got, want)
			}
		}
	}
	p, _ := boundPage([]item(nil), "", MaxPageBytes, cursorOf)
	if got, _ := json.Marshal(p); string(got) != `{"items":[]}` {
		t.Errorf("empty page = %s, want {\"items\":[]}", got)
	}
}
