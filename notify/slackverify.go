package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SlackSkew is how far a Slack request's timestamp may be from now.
const SlackSkew = 5 * time.Minute

// VerifySlack checks a request from Slack the v0 way: sig is
// "v0=" + hex HMAC-SHA256 of "v0:<timestamp>:<body>" under the signing
// secret, and the timestamp is within SlackSkew of now. The comparison is
// constant-time. Errors: ErrSignature.
func VerifySlack(secret []byte, timestamp, sig string, body []byte, now time.Time) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil || strconv.FormatInt(ts, 10) != timestamp {
		return fmt.Errorf("%w: bad timestamp", ErrSignature)
	}
	if d := now.Sub(time.Unix(ts, 0)); d > SlackSkew || d < -SlackSkew {
		return fmt.Errorf("%w: timestamp not within %v", ErrSignature, SlackSkew)
	}
	got, ok := strings.CutPrefix(sig, "v0=")
	want := slackSig(secret, timestamp, body)
	if !ok || !hmac.Equal([]byte(got), []byte(want)) {
		return fmt.Errorf("%w: signature does not match", ErrSignature)
	}
	return nil
}

func slackSig(secret []byte, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("v0:" + timestamp + ":"))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}
