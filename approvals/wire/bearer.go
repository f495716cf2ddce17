package wire

import "strings"

const bearerPrefix = "Bearer"

// BearerToken extracts the token of a "Bearer <token>" header value; the
// scheme's case does not matter (RFC 7235 §2.1). It is the one parser of
// bearer tokens: approvals.Authenticate and every surface's sessions read
// theirs with it.
func BearerToken(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	tok = strings.TrimSpace(tok)
	return tok, ok && strings.EqualFold(scheme, bearerPrefix) && tok != ""
}
