package links

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"time"

	"github.com/countersign/countersign/domain"
)

// Decisions a link may carry.
const (
	Approve = "allow"
	Deny    = "deny"
)

// Claim is what a link stands for: person answers decision on request at
// revision, before Deadline.
type Claim struct {
	Tenant   domain.TenantID
	Request  domain.RequestID
	Revision uint64
	Person   domain.MemberID
	Decision string // Approve or Deny
	Deadline time.Time
}

const (
	version = 1
	macLen  = sha256.Size
	// macDomain separates link MACs from any other use of the secret.
	macDomain = "countersign decision link v1\x00"
)

var decisionByte = map[string]byte{Approve: 'a', Deny: 'd'}

// Mint returns the token of c under secret.
func Mint(secret []byte, c Claim) string {
	body := encode(c)
	return base64.RawURLEncoding.EncodeToString(append(body, sign(secret, body)...))
}

// Check decodes token, verifies its MAC under secret and its deadline
// against now. Errors: ErrMalformed, ErrForged, ErrExpired.
func Check(secret []byte, token string, now time.Time) (Claim, error) {
	raw, err := base64.RawURLEncoding.Strict().DecodeString(token)
	if err != nil || len(raw) <= macLen || len(token) > 1024 {
		return Claim{}, ErrMalformed
	}
	body, mac := raw[:len(raw)-macLen], raw[len(raw)-macLen:]
	c, ok := decode(body)
	if !ok {
		return Claim{}, ErrMalformed
	}
	if !hmac.Equal(mac, sign(secret, body)) {
		return Claim{}, ErrForged
	}
	if !now.Before(c.Deadline) {
		return c, ErrExpired
	}
	return c, nil
}

func sign(secret, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(macDomain))
	m.Write(body)
	return m.Sum(nil)
}

// encode writes: version, decision, revision (uvarint), deadline (8 bytes
// big endian), then tenant, request and person, each a length byte and
// the bytes.
func encode(c Claim) []byte {
	b := []byte{version, decisionByte[c.Decision]}
	b = binary.AppendUvarint(b, c.Revision)
	b = binary.BigEndian.AppendUint64(b, uint64(c.Deadline.Unix()))
	for _, s := range []string{string(c.Tenant), string(c.Request), string(c.Person)} {
		b = append(b, byte(len(s)))
		b = append(b, s...)
	}
	return b
}

func decode(b []byte) (Claim, bool) {
	var c Claim
	if len(b) < 2 || b[0] != version {
		return c, false
	}
	switch b[1] {
	case 'a':
		c.Decision = Approve
	case 'd':
		c.Decision = Deny
	default:
		return c, false
	}
	rev, n := binary.Uvarint(b[2:])
	if n <= 0 || len(b) < 2+n+8 {
		return c, false
	}
	c.Revision, b = rev, b[2+n:]
	c.Deadline, b = time.Unix(int64(binary.BigEndian.Uint64(b)), 0).UTC(), b[8:]
	var parts [3]string
	for i := range parts {
		if len(b) < 1 || len(b) < 1+int(b[0]) {
			return c, false
		}
		parts[i], b = string(b[1:1+int(b[0])]), b[1+int(b[0]):]
	}
	c.Tenant, c.Request, c.Person = domain.TenantID(parts[0]), domain.RequestID(parts[1]), domain.MemberID(parts[2])
	return c, len(b) == 0 && c.valid()
}

// valid checks the ids inside a decoded claim as the rest of the system
// would: configured ids and a generated request id.
func (c Claim) valid() bool {
	return domain.ConfigIDPattern.MatchString(string(c.Tenant)) && domain.ConfigIDPattern.MatchString(string(c.Person)) &&
		domain.ValidGeneratedID(string(c.Request))
}
