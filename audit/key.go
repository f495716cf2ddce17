package audit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/countersign/countersign/domain"
	"github.com/countersign/countersign/events"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/mod/sumdb/note"
)

// Signer signs the tenants' checkpoints with one note key.
type Signer struct {
	signer note.Signer
	vkey   string
}

// NewSigner returns the Signer of a note signer key.
func NewSigner(skey string) (*Signer, error) {
	s, err := newSigner(skey)
	if err != nil {
		return nil, err
	}
	v, err := VerifierKey(skey)
	if err != nil {
		return nil, err
	}
	return &Signer{signer: s, vkey: v}, nil
}

// Sign signs c as a note.
func (s *Signer) Sign(c Checkpoint) ([]byte, error) {
	return note.Sign(&note.Note{Text: c.Text()}, s.signer)
}

// VerifierKey returns the key that verifies the checkpoints.
func (s *Signer) VerifierKey() string { return s.vkey }

// LoadSigner returns the Signer of skey (from audit_signing_key_env) or,
// when skey is empty, of the key kept in the audit stream, which the
// first process to start without one makes (concurrent first starts agree
// on one: it is created with a compare-and-set). It warns when it uses a
// kept key.
func LoadSigner(ctx context.Context, js jetstream.JetStream, skey string, log *slog.Logger) (*Signer, error) {
	if skey != "" {
		return NewSigner(skey)
	}
	st, err := js.Stream(ctx, Stream)
	if err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	for attempt := 0; attempt < 3; attempt++ {
		m, err := st.GetLastMsgForSubject(ctx, events.AuditKeySubject)
		if err == nil {
			log.Warn("audit: checkpoints are signed with a key countersign made and keeps in its state; set audit_signing_key_env to hold it yourself")
			return NewSigner(string(m.Data))
		}
		if !errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil, fmt.Errorf("audit: signer key: %w", err)
		}
		skey, _, err := NewKey()
		if err != nil {
			return nil, err
		}
		msg := &nats.Msg{Subject: events.AuditKeySubject, Data: []byte(skey), Header: nats.Header{}}
		msg.Header.Set(nats.ExpectedLastSubjSeqHdr, "0")
		if _, err := js.PublishMsg(ctx, msg); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
			var apiErr *jetstream.APIError
			if !errors.As(err, &apiErr) || apiErr.ErrorCode != wrongLastSequence {
				return nil, fmt.Errorf("audit: keep the signer key: %w", err)
			}
		}
	}
	return nil, fmt.Errorf("audit: signer key: not kept")
}

// Checkpoint returns tenant's signed checkpoint at its log's size now.
func (l *Log) Checkpoint(ctx context.Context, t domain.TenantID, s *Signer) ([]byte, error) {
	var c Checkpoint
	err := l.Tree(ctx, t, func(tr *Tree) error {
		root, err := tr.Root(tr.Size())
		c = Checkpoint{Origin: Origin(t), Size: tr.Size(), Root: root}
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.Sign(c)
}
