package app_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/countersign/countersign/notify"
)

// Credentials of the mailbox's AUTH PLAIN.
const (
	mailUser = "countersign@example.com"
	mailPass = "the mailbox's test password"
)

// mailbox is a real SMTP server on loopback (emersion/go-smtp): STARTTLS
// with a certificate made here (when tls), AUTH PLAIN, and a switch that
// makes it refuse every message with a temporary failure.
type mailbox struct {
	srv  *smtp.Server
	addr string
	cert tls.Certificate
	pool *x509.CertPool // nil: no STARTTLS

	mu      sync.Mutex
	got     []received
	auths   []authAttempt
	refuse  bool
	refused int
	// refuseRcpt is an address the server refuses (550), as for a
	// mailbox that does not exist.
	refuseRcpt string
}

// received is one message the server took, with how it came.
type received struct {
	From string
	To   []string
	Data []byte
	TLS  bool
	User string
}

type authAttempt struct {
	User string
	TLS  bool
}

func newMailbox(t *testing.T, withTLS bool) *mailbox {
	t.Helper()
	mb := &mailbox{}
	if withTLS {
		mb.cert, mb.pool = selfSigned(t)
	}
	mb.serve(t, "127.0.0.1:0")
	t.Cleanup(func() { mb.down() })
	return mb
}

// serve starts the server on addr (again, after down: the same address).
func (mb *mailbox) serve(t *testing.T, addr string) {
	t.Helper()
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &mailSession{mb: mb, c: c}, nil }))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = mb.pool == nil // a server that would take credentials in the clear
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	if mb.pool != nil {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{mb.cert}}
	}
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the old listener's port may linger briefly
		if ln, err = net.Listen("tcp", addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	mb.mu.Lock()
	mb.srv, mb.addr = srv, ln.Addr().String()
	mb.mu.Unlock()
	go func() { _ = srv.Serve(ln) }()
}

// down stops the server: connections are refused until serve.
func (mb *mailbox) down() {
	mb.mu.Lock()
	srv := mb.srv
	mb.mu.Unlock()
	_ = srv.Close()
}

// selfSigned makes a certificate for 127.0.0.1 and a pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mailbox"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// tuning trusts the mailbox's certificate and retries quickly.
func (mb *mailbox) tuning() notify.Tuning {
	return notify.Tuning{Timeout: 2 * time.Second, BackoffBase: 30 * time.Millisecond, BackoffMax: 200 * time.Millisecond,
		LeaseTTL: 3 * time.Second, TLS: &tls.Config{RootCAs: mb.pool}}
}

func (mb *mailbox) setRefuse(v bool) {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	mb.refuse = v
}

func (mb *mailbox) messages() []received {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return append([]received(nil), mb.got...)
}

func (mb *mailbox) attempts() []authAttempt {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return append([]authAttempt(nil), mb.auths...)
}

func (mb *mailbox) refusals() int {
	mb.mu.Lock()
	defer mb.mu.Unlock()
	return mb.refused
}

// to returns the messages to addr, parsed, in arrival order.
func (mb *mailbox) to(t *testing.T, addr string) []parsedMail {
	var out []parsedMail
	for _, m := range mb.messages() {
		if len(m.To) == 1 && m.To[0] == addr {
			out = append(out, parseMail(t, m))
		}
	}
	return out
}

type mailSession struct {
	mb   *mailbox
	c    *smtp.Conn
	from string
	to   []string
	user string
}

func (s *mailSession) tls() bool { _, ok := s.c.TLSConnectionState(); return ok }

func (s *mailSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *mailSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		s.mb.mu.Lock()
		s.mb.auths = append(s.mb.auths, authAttempt{User: user, TLS: s.tls()})
		s.mb.mu.Unlock()
		if user != mailUser || pass != mailPass {
			return errors.New("bad credentials")
		}
		s.user = user
		return nil
	}), nil
}

func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	s.mb.mu.Lock()
	defer s.mb.mu.Unlock()
	if s.mb.refuse {
		s.mb.refused++
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	if s.mb.pool != nil && s.user == "" {
		return &smtp.SMTPError{Code: 530, EnhancedCode: smtp.EnhancedCode{5, 7, 0}, Message: "authentication required"}
	}
	s.from = from
	return nil
}

func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.mb.mu.Lock()
	defer s.mb.mu.Unlock()
	if to == s.mb.refuseRcpt {
		s.mb.refused++
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.mb.mu.Lock()
	defer s.mb.mu.Unlock()
	s.mb.got = append(s.mb.got, received{From: s.from, To: s.to, Data: b, TLS: s.tls(), User: s.user})
	return nil
}

func (s *mailSession) Reset()        { s.from, s.to = "", nil }
func (s *mailSession) Logout() error { return nil }

// parsedMail is a message read back with net/mail and mime/multipart.
type parsedMail struct {
	received
	Header     mail.Header
	Subject    string
	Text, HTML string
}

func parseMail(t *testing.T, m received) parsedMail {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatalf("net/mail: %v\n%s", err, m.Data)
	}
	p := parsedMail{received: m, Header: msg.Header}
	if p.Subject, err = new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); err != nil {
		t.Fatalf("subject: %v", err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/alternative" {
		t.Fatalf("content type %q (%v)", msg.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for i := 0; ; i++ {
		part, err := mr.NextPart() // decodes quoted-printable
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		raw, _ := io.ReadAll(part)
		b := strings.ReplaceAll(string(raw), "\r\n", "\n")
		switch ct := part.Header.Get("Content-Type"); {
		case strings.HasPrefix(ct, "text/plain") && i == 0:
			p.Text = b
		case strings.HasPrefix(ct, "text/html") && i == 1:
			p.HTML = b
		default:
			t.Fatalf("part %d is %q", i, ct)
		}
	}
	if p.Text == "" || p.HTML == "" {
		t.Fatalf("a part is missing: %+v", p)
	}
	return p
}
