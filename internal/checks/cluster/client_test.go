//go:build cluster

package cluster

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"time"
)

// client calls one API process as one principal.
type client struct {
	url, token string
	http       *http.Client
}

func newClient(addr, token string) *client {
	return &client{url: "http://" + addr, token: token,
		http: &http.Client{Timeout: 45 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}}
}

// do sends body as JSON and decodes the answer into out (if not nil). It
// returns the status, 0 when the call did not complete.
func (c *client) do(method, path string, body any, hdr map[string]string, out any) int {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.url+path, rd)
	if err != nil {
		return 0
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil {
		_ = json.Unmarshal(b, out)
	}
	return resp.StatusCode
}

// retryable is a status after which the call may or may not have taken
// effect, or was refused for now: no answer, 429, 5xx.
func retryable(code int) bool { return code == 0 || code == 429 || code >= 500 }

// record is the part of a request record the tests read.
type record struct {
	ID         string    `json:"id"`
	Status     string    `json:"status"`
	Revision   uint64    `json:"revision"`
	DeadlineAt time.Time `json:"deadline_at"`
	Approver   *ref      `json:"approver"`
	Decision   *struct {
		Status    string    `json:"status"`
		By        ref       `json:"by"`
		DecidedAt time.Time `json:"decided_at"`
	} `json:"decision"`
	// Error is set on a problem answer.
	Error string `json:"error"`
}

type ref struct {
	Kind string `json:"kind"`
	ID   string `json:"id"`
}

func (r record) terminal() bool { return r.Status != "" && r.Status != "pending" }

func (r record) by() string {
	if r.Decision == nil {
		return ""
	}
	return r.Decision.By.Kind
}

func call(tool string, i int, timeout string) map[string]any {
	return map[string]any{"tool": tool, "timeout": timeout,
		"arguments": map[string]any{"payment_id": i, "amount": 4900, "currency": "GBP"}}
}
