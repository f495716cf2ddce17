package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/countersign/countersign/approvals"
)

// readBody reads a strict JSON body into v: at most MaxBody bytes (413),
// then approvals.Decode (400). It returns the SHA-256 of the body's
// canonical (JCS) form, which idempotency compares.
func readBody(r *http.Request, v any) (string, error) {
	raw, err := readRaw(r)
	if err != nil {
		return "", err
	}
	return approvals.Decode(raw, v)
}

// readOptionalBody is readBody for endpoints whose body may be empty.
func readOptionalBody(r *http.Request, v any) error {
	raw, err := readRaw(r)
	if err != nil {
		return err
	}
	return approvals.DecodeOptional(raw, v)
}

func readRaw(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(r.Body)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, errTooLarge
	}
	if err != nil {
		return nil, badRequest("body", "could not read the body")
	}
	return raw, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	return json.NewEncoder(w).Encode(v)
}
