package config

import (
	"net"
	"net/mail"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// EmailConfig is a tenant's `email:`, the mail server that tells its
// members with an `email` about the requests that wait on them (SPEC §10
// "Email"). The variables it names are read when the server starts.
type EmailConfig struct {
	// SMTP is the server, host:port (587 for submission with STARTTLS).
	SMTP string `yaml:"smtp"`
	// From is the sender address ("Approvals <approvals@example.com>").
	From string `yaml:"from"`
	// UsernameEnv and PasswordEnv name the variables holding the AUTH
	// PLAIN credentials; both or neither.
	UsernameEnv string `yaml:"username_env"`
	PasswordEnv string `yaml:"password_env"`
	// StartTLS: true (the default) upgrades with STARTTLS whenever the
	// server offers it, and never sends credentials without TLS; false
	// never upgrades (a relay on loopback; credentials then go only to a
	// loopback host).
	StartTLS *bool `yaml:"starttls"`
	line     int
}

// UnmarshalYAML remembers the line.
func (e *EmailConfig) UnmarshalYAML(n *yaml.Node) error {
	type plain EmailConfig
	return decodeAt(n, &e.line, (*plain)(e))
}

// UsesStartTLS is starttls, true when not given.
func (e *EmailConfig) UsesStartTLS() bool { return e.StartTLS == nil || *e.StartTLS }

// validate checks the keys; the error names the line.
func (e *EmailConfig) validate() error {
	host, port, err := net.SplitHostPort(e.SMTP)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || host == "" || n < 1 || n > 65535 {
		return lineErr(e.line, "email: smtp %q is not host:port", e.SMTP)
	}
	if a, err := mail.ParseAddress(e.From); err != nil || !strings.Contains(strings.TrimLeft(a.Address, "@"), "@") {
		return lineErr(e.line, "email: from %q is not an email address", e.From)
	}
	if (e.UsernameEnv == "") != (e.PasswordEnv == "") {
		return lineErr(e.line, "email: username_env and password_env go together (both or neither)")
	}
	if e.UsernameEnv != "" && !e.UsesStartTLS() && !loopback(host) {
		return lineErr(e.line, "email: starttls: false would send the credentials in the clear to %s (only a loopback relay may get them without TLS)", host)
	}
	return nil
}
