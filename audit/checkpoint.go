package audit

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"github.com/countersign/countersign/domain"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// KeyName names the checkpoints' signer key (a note key's name).
const KeyName = "countersign-audit"

// Origin is the checkpoint origin of a tenant's log.
func Origin(tenant domain.TenantID) string { return "countersign/" + string(tenant) + "/audit" }

// Checkpoint is a C2SP tlog-checkpoint body: origin, tree size, root hash.
type Checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
}

// Text is the checkpoint body: each field on its own line.
func (c Checkpoint) Text() string {
	return c.Origin + "\n" + strconv.FormatInt(c.Size, 10) + "\n" + base64.StdEncoding.EncodeToString(c.Root[:]) + "\n"
}

// ParseCheckpoint parses a checkpoint body (extension lines after the
// third are allowed and ignored, as C2SP says).
func ParseCheckpoint(text string) (Checkpoint, error) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 || lines[0] == "" {
		return Checkpoint{}, fmt.Errorf("audit: checkpoint: not origin, size and root hash on three lines")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || lines[1] != strconv.FormatInt(size, 10) {
		return Checkpoint{}, fmt.Errorf("audit: checkpoint: bad tree size %q", lines[1])
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("audit: checkpoint: bad root hash %q", lines[2])
	}
	c := Checkpoint{Origin: lines[0], Size: size}
	copy(c.Root[:], root)
	return c, nil
}

// OpenCheckpoint verifies a signed checkpoint with vkey (a note verifier
// key) and parses it. A note not signed by that key fails.
func OpenCheckpoint(msg []byte, vkey string) (Checkpoint, error) {
	v, err := note.NewVerifier(strings.TrimSpace(vkey))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("audit: verifier key: %w", err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("audit: checkpoint signature: %w", err)
	}
	return ParseCheckpoint(n.Text)
}

// NewKey makes a signer key and its verifier key.
func NewKey() (skey, vkey string, err error) { return note.GenerateKey(rand.Reader, KeyName) }

// VerifierKey returns the verifier key of a signer key.
func VerifierKey(skey string) (string, error) {
	s, err := newSigner(skey)
	if err != nil {
		return "", err
	}
	// A signer key is PRIVATE+KEY+<name>+<hash>+<base64 of the algorithm
	// byte and the Ed25519 seed>; NewSigner checked that shape.
	fields := strings.SplitN(strings.TrimSpace(skey), "+", 5)
	key, err := base64.StdEncoding.DecodeString(fields[4])
	if err != nil || len(key) != 1+ed25519.SeedSize {
		return "", fmt.Errorf("audit: signer key: not an Ed25519 key")
	}
	pub := ed25519.NewKeyFromSeed(key[1:]).Public().(ed25519.PublicKey)
	return note.NewEd25519VerifierKey(s.Name(), pub)
}

// CheckExtends reports whether the log chain verified extends checkpoint
// c: c names origin, the log holds at least c.Size entries, and its first
// c.Size entries hash to c.Root.
func CheckExtends(chain *Chain, c Checkpoint, origin string) error {
	if c.Origin != origin {
		return fmt.Errorf("audit: checkpoint is of %q, not %q", c.Origin, origin)
	}
	if c.Size > chain.tree.Size() {
		return fmt.Errorf("audit: the log has %d entries, fewer than the checkpoint's %d: it was truncated", chain.tree.Size(), c.Size)
	}
	root, err := chain.tree.Root(c.Size)
	if err != nil {
		return err
	}
	if root != c.Root {
		return fmt.Errorf("audit: the log's first %d entries are not the checkpoint's: history was rewritten", c.Size)
	}
	return nil
}

func newSigner(skey string) (note.Signer, error) {
	s, err := note.NewSigner(strings.TrimSpace(skey))
	if err != nil {
		return nil, fmt.Errorf("audit: signer key: %w", err)
	}
	return s, nil
}
