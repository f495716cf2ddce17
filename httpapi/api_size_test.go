package httpapi_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// TestAPINoHTMLEscaping: API JSON is not HTML-escaped (a "<" is one byte,
// not the six of \u003c) in records, lists, problems and event data.
func TestAPINoHTMLEscaping(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	ch, _ := openEvents(t, url, tokPerson, "")
	const html = "<b>&amp;</b>"
	r := main.do("POST", "/v1/requests", `{"tool":"deploy","arguments":{"html":"`+html+`"},"reason":"`+html+`"}`)
	r.want(t, "submit", http.StatusCreated)
	id := str(r.body["id"])
	_, _, list := person.list("")
	raws := map[string]string{
		"submit":  string(r.raw),
		"get":     string(main.do("GET", "/v1/requests/"+id, nil).raw),
		"list":    string(list.raw),
		"problem": string(main.do("POST", "/v1/requests", `{"tool":"deploy","arguments":{},"<x>":1}`).raw),
		"event":   nextAbout(t, ch, id).data,
	}
	for name, raw := range raws {
		if strings.Contains(raw, `\u003c`) || strings.Contains(raw, `\u0026`) {
			t.Errorf("%s is HTML-escaped: %.300s", name, raw)
		}
		want := html
		if name == "problem" {
			want = "<x>"
		}
		if !strings.Contains(raw, want) {
			t.Errorf("%s lacks %q: %.300s", name, want, raw)
		}
	}
}

// TestAPIListByteBound: a list page holds at most 4 MiB of items (at least
// one); when that bound cuts the page, next_cursor continues after the last
// item shown, so paging still reaches every item once.
func TestAPIListByteBound(t *testing.T) {
	t.Parallel()
	url := startAcme(t)
	main, person := newClient(t, url, tokMain), newClient(t, url, tokPerson)
	big := strings.Repeat("<", 900_000) // five of these pass 4 MiB
	var want []string
	for i := 0; i < 5; i++ {
		body := fmt.Sprintf(`{"tool":"deploy","arguments":{"s":"%s","i":%d}}`, big, i)
		want = append(want, str(main.do("POST", "/v1/requests", body).want(t, "submit", http.StatusCreated).body["id"]))
	}
	var got []string
	cursor, pages := "", 0
	for pages < 10 {
		q := "?limit=50"
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		items, next, r := person.list(q)
		r.want(t, "page "+q, http.StatusOK)
		pages++
		if len(r.raw) > 5<<20 {
			t.Errorf("page %d is %d bytes, want at most 4 MiB of items", pages, len(r.raw))
		}
		if len(items) == 0 {
			t.Fatalf("page %d is empty (next %q)", pages, next)
		}
		got = append(got, ids(items)...)
		if cursor = next; cursor == "" {
			break
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("paged ids:\n got %v\nwant %v", got, want)
	}
	if pages < 2 {
		t.Errorf("%d page(s) for 4.5 MB of items; want the byte bound to cut the first", pages)
	}
}
