package httpapi

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/countersign/countersign/problem"
)

// query parses r's query whole (SPEC §5): a parameter whose name or value
// is not valid percent-encoding, or that is given twice, is 400
// InvalidRequest naming it. (url.URL.Query drops a pair it cannot decode,
// so ?cursor=%%% would read as no cursor at all.)
func query(r *http.Request) (url.Values, error) {
	q := url.Values{}
	for pair := range strings.SplitSeq(r.URL.RawQuery, "&") {
		if pair == "" {
			continue
		}
		rawKey, rawValue, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(rawKey)
		if err != nil {
			return nil, problem.Invalid(rawKey, "a query parameter's name is not valid percent-encoding")
		}
		value, err := url.QueryUnescape(rawValue)
		switch {
		case err != nil:
			return nil, problem.Invalid(key, key+" is not valid percent-encoding")
		case q.Has(key):
			return nil, problem.Invalid(key, key+" is given more than once")
		}
		q.Set(key, value)
	}
	return q, nil
}
