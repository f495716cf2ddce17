package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/countersign/countersign/approvals/wire"
	"github.com/countersign/countersign/kvstate"
	"github.com/countersign/countersign/problem"
)

// readBody reads a strict JSON body into v: at most MaxBody bytes (413),
// then wire.Decode (400). It returns the SHA-256 of the body's
// canonical (JCS) form, which idempotency compares.
func readBody(r *http.Request, v any) (string, error) {
	raw, err := readRaw(r)
	if err != nil {
		return "", err
	}
	return wire.Decode(raw, v)
}

// trackedBody is a request body limited to MaxBody that remembers reaching
// its end. (net/http itself lifts the read timeout once the body is read,
// so the timeout bounds reading the request, not the handler.)
type trackedBody struct {
	io.ReadCloser
	done bool
}

func trackBody(w http.ResponseWriter, r *http.Request) io.ReadCloser {
	return &trackedBody{ReadCloser: http.MaxBytesReader(w, r.Body, MaxBody), done: r.ContentLength == 0}
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.done = true
	}
	return n, err
}

// bodyRead reports whether r's body was read to its end (or was empty).
func bodyRead(r *http.Request) bool {
	b, ok := r.Body.(*trackedBody)
	return !ok || b.done
}

func readRaw(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, errTooLarge
	}
	if err != nil {
		return nil, problem.Invalid("body", "could not read the body")
	}
	return raw, nil
}

// writeJSON writes v as the response, not HTML-escaped.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	return writeEncoded(w, status, "application/json", v)
}

// writeRecord writes a request record: the JSON stored for it when this
// process just wrote it (the bytes writeJSON would encode, not encoded
// twice), else the record encoded.
func writeRecord(w http.ResponseWriter, status int, rec *kvstate.Record) error {
	raw := rec.Stored()
	if raw == nil {
		req := rec.Request // a copy on the heap only here: rec stays on its caller's stack
		return writeJSON(w, status, &req)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if _, err := w.Write(raw); err != nil {
		return err
	}
	_, err := w.Write(newline)
	return err
}

var newline = []byte("\n")

func writeEncoded(w http.ResponseWriter, status int, contentType string, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(status)
	return enc.Encode(v)
}
