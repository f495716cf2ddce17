package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/countersign/countersign/problem"
)

// Client speaks the HTTP API (SPEC §5) for the CLI.
type Client struct {
	base, token string
	http        *http.Client

	peopleOnce sync.Once
	known      people // GET /v1/people, read once (people.go)
}

// New checks the server URL and returns a client for it with token. A nil
// hc is a client with a 30s timeout.
func New(base, token string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--url %q is not an http(s) URL", base)
	}
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{base: strings.TrimRight(base, "/"), token: token, http: hc}, nil
}

// maxResponse bounds what the CLI reads from one response.
const maxResponse = 16 << 20

// do sends one request (body, when not nil, as JSON) and returns the raw
// response body of a 2xx answer. Errors: *problem.Error when the server
// refused, or a transport error.
func (c *Client) do(ctx context.Context, method, path string, body any) ([]byte, error) {
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach countersign at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s %s: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, refusal(resp.StatusCode, raw)
	}
	return raw, nil
}

func (c *Client) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// refusal reads a problem+json body; anything else becomes a refusal with
// the status and a bounded, cleaned excerpt of the body.
func refusal(status int, raw []byte) *problem.Error {
	p := problem.Parse(status, raw)
	if p.Code == "" {
		p.Detail = text(string(raw), 200)
	}
	p.Detail = text(p.Detail, 500)
	return p
}

// get decodes the JSON answer of GET path into v and returns the raw body.
func (c *Client) get(ctx context.Context, path string, v any) ([]byte, error) {
	raw, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, fmt.Errorf("the server's answer to GET %s is not what countersign sends: %w", path, err)
	}
	return raw, nil
}

// page is one page of a list.
type page struct {
	Items      []json.RawMessage `json:"items"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// maxPages bounds how many pages a list follows.
const maxPages = 1000

// list follows next_cursor from path (with its query q) and returns every
// item.
func (c *Client) list(ctx context.Context, path string, q url.Values) ([]json.RawMessage, error) {
	var items []json.RawMessage
	for range maxPages {
		var p page
		if _, err := c.get(ctx, path+"?"+q.Encode(), &p); err != nil {
			return nil, err
		}
		items = append(items, p.Items...)
		if p.NextCursor == "" {
			return items, nil
		}
		q.Set("cursor", p.NextCursor)
	}
	return nil, errors.New("the list did not end after 1000 pages")
}

// apiPath builds an API path from a fixed prefix and one id, escaped.
func apiPath(prefix, id string) string {
	return prefix + url.PathEscape(strings.TrimSpace(id))
}

// Config returns the answer of GET /v1/config (scope admin): the running
// config revision and the caller's tenant in it.
func (c *Client) Config(ctx context.Context) ([]byte, error) {
	return c.do(ctx, http.MethodGet, "/v1/config", nil)
}
