package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// Stored is the session countersign login keeps (SPEC §13).
type Stored struct {
	URL       string    `json:"url"`
	Token     string    `json:"token"`
	Tenant    string    `json:"tenant"`
	Member    string    `json:"member"`
	ExpiresAt time.Time `json:"expires_at"`
}

// SessionPath is where the session is kept under the user's config
// directory (os.UserConfigDir).
func SessionPath(configDir string) string {
	return filepath.Join(configDir, "countersign", "session.json")
}

// SaveSession writes s to path, mode 0600 (its directory 0700), replacing
// what was there.
func SaveSession(path string, s Stored) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(s, "", "  ")
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil { // WriteFile keeps an older file's mode
		return err
	}
	return os.Rename(tmp, path)
}

// LoadSession returns the token kept at path for the server at url, if it
// has not expired by now.
func LoadSession(path, url string, now time.Time) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	var s Stored
	if json.Unmarshal(b, &s) != nil || s.URL != url || s.Token == "" || !now.Before(s.ExpiresAt) {
		return "", false
	}
	return s.Token, true
}

// deviceStart is the answer of POST /v1/login/device.
type deviceStart struct {
	DeviceCode              string `json:"device_code"`
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete"`
	Interval                int64  `json:"interval"`
}

// Login signs a person in with the provider's device flow through the
// server (SPEC §13): it prints where to go and the code to enter on out,
// then waits until the person has finished (or the server refuses).
func (c *Client) Login(ctx context.Context, out io.Writer) (Stored, error) {
	raw, err := c.do(ctx, http.MethodPost, "/v1/login/device", map[string]string{})
	if err != nil {
		return Stored{}, err
	}
	var d deviceStart
	if err := json.Unmarshal(raw, &d); err != nil || d.DeviceCode == "" {
		return Stored{}, errors.New("the server's answer to POST /v1/login/device is not what countersign sends")
	}
	to := d.VerificationURIComplete
	if to == "" {
		to = d.VerificationURI
	}
	fmt.Fprintf(out, "To sign in, open %s\nand check that it shows the code %s\n", text(to, 500), text(d.UserCode, 64))
	for {
		s, done, err := c.loginPoll(ctx, d)
		if done || err != nil {
			return s, err
		}
	}
}

// loginPoll asks once; done is false while the person has not finished.
func (c *Client) loginPoll(ctx context.Context, d deviceStart) (Stored, bool, error) {
	req, err := c.newRequest(ctx, http.MethodPost, "/v1/login/device/token", map[string]any{"device_code": d.DeviceCode, "interval": d.Interval})
	if err != nil {
		return Stored{}, false, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return Stored{}, false, fmt.Errorf("cannot reach countersign at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	switch resp.StatusCode {
	case http.StatusAccepted:
		return Stored{}, false, nil
	case http.StatusOK:
		s := Stored{URL: c.base}
		if err := json.Unmarshal(raw, &s); err != nil || s.Token == "" {
			return Stored{}, true, errors.New("the server's session answer is not what countersign sends")
		}
		return s, true, nil
	}
	return Stored{}, true, refusal(resp.StatusCode, raw)
}
