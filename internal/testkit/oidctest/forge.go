package oidctest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
)

// forging replaces the id_token of token answers while Forge is on.
func (p *Provider) forging(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		f := p.forge
		p.mu.Unlock()
		if f == nil || r.URL.Path != "/oauth/token" {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var m map[string]any
		if json.Unmarshal(body, &m) == nil {
			if raw, ok := m["id_token"].(string); ok {
				m["id_token"] = f(raw)
				body, _ = json.Marshal(m)
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		_, _ = bytes.NewReader(body).WriteTo(w)
	})
}
