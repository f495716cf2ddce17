package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks headers.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix marks a secret given in the Standard Webhooks form:
// whsec_ and the base64 of the key.
const secretPrefix = "whsec_"

// ParseSecret turns the value of an endpoint's secret variable into the
// HMAC key: "whsec_<base64>" is decoded, any other non-empty value is the
// key as written. Errors: ErrConfig.
func ParseSecret(v string) ([]byte, error) {
	if v == "" {
		return nil, fmt.Errorf("%w: empty webhook secret", ErrConfig)
	}
	if b64, ok := strings.CutPrefix(v, secretPrefix); ok {
		key, err := base64.StdEncoding.DecodeString(b64)
		if err != nil || len(key) == 0 {
			return nil, fmt.Errorf("%w: a whsec_ secret must be base64", ErrConfig)
		}
		return key, nil
	}
	return []byte(v), nil
}

// Sign sets the Standard Webhooks headers of one attempt on h.
func Sign(h http.Header, key []byte, id string, at time.Time, body []byte) {
	ts := strconv.FormatInt(at.Unix(), 10)
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + ts + "."))
	m.Write(body)
	h.Set(HeaderID, id)
	h.Set(HeaderTimestamp, ts)
	h.Set(HeaderSignature, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
}
