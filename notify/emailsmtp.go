package notify

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/smtp"
	"time"
)

// ErrInsecureAuth: the mail server offered no TLS, and credentials are
// never sent without it.
var ErrInsecureAuth = errors.New("notify: email: the server offers no STARTTLS; credentials are not sent in the clear")

// smtpClient sends one tenant's messages through net/smtp, one
// connection a message.
type smtpClient struct {
	mail    *Mail
	host    string
	timeout time.Duration
	tls     *tls.Config
}

func newSMTPClient(m *Mail, t Tuning) *smtpClient {
	host, _, _ := net.SplitHostPort(m.Addr)
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.TLS != nil {
		cfg = t.TLS.Clone()
	}
	cfg.ServerName = host
	return &smtpClient{mail: m, host: host, timeout: t.Timeout, tls: cfg}
}

// send makes one attempt at msg, bounded by the timeout and ctx: connect,
// STARTTLS when offered (unless StartTLS is off), AUTH PLAIN over TLS
// only (net/smtp's PlainAuth refuses the clear but to localhost; with
// StartTLS on, this refuses it even there), then the envelope and data.
func (c *smtpClient) send(ctx context.Context, msg *message) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", c.mail.Addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	s, err := smtp.NewClient(conn, c.host)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := c.secure(s); err != nil {
		return err
	}
	if err := s.Mail(msg.from); err != nil {
		return err
	}
	if err := s.Rcpt(msg.to); err != nil {
		return err
	}
	w, err := s.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg.data); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return s.Quit()
}

// secure starts TLS when it should and authenticates when configured.
func (c *smtpClient) secure(s *smtp.Client) error {
	if ok, _ := s.Extension("STARTTLS"); ok && c.mail.StartTLS {
		if err := s.StartTLS(c.tls); err != nil {
			return fmt.Errorf("notify: email: starttls: %w", err)
		}
	}
	if c.mail.Username == "" {
		return nil
	}
	if _, isTLS := s.TLSConnectionState(); !isTLS && c.mail.StartTLS {
		return ErrInsecureAuth
	}
	if ok, _ := s.Extension("AUTH"); !ok {
		return errors.New("notify: email: the server offers no AUTH")
	}
	return s.Auth(smtp.PlainAuth("", c.mail.Username, c.mail.Password, c.host))
}
