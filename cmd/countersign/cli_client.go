package main

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

	"github.com/countersign/countersign/problem"
)

// cliClient speaks the HTTP API (SPEC §5) for the CLI.
type cliClient struct {
	base, token string
	http        *http.Client
}

// maxCLIResponse bounds what the CLI reads from one response.
const maxCLIResponse = 16 << 20

// do sends one request (body, when not nil, as JSON) and returns the raw
// response body of a 2xx answer. Errors: *problem.Error when the server
// refused, or a transport error.
func (c *cliClient) do(ctx context.Context, method, path string, body any) ([]byte, error) {
	req, err := c.newRequest(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach countersign at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxCLIResponse))
	if err != nil {
		return nil, fmt.Errorf("reading the answer of %s %s: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, cliProblemFrom(resp.StatusCode, raw)
	}
	return raw, nil
}

func (c *cliClient) newRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
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

// cliProblemFrom reads a problem+json body; anything else becomes a
// refusal with the status and a bounded, cleaned excerpt of the body.
func cliProblemFrom(status int, raw []byte) *problem.Error {
	p := problem.Parse(status, raw)
	if p.Code == "" {
		p.Detail = cliText(string(raw), 200)
	}
	p.Detail = cliText(p.Detail, 500)
	return p
}

// get decodes the JSON answer of GET path into v and returns the raw body.
func (c *cliClient) get(ctx context.Context, path string, v any) ([]byte, error) {
	raw, err := c.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil, fmt.Errorf("the server's answer to GET %s is not what countersign sends: %w", path, err)
	}
	return raw, nil
}

// cliPage is one page of a list.
type cliPage struct {
	Items      []json.RawMessage `json:"items"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// cliMaxPages bounds how many pages a list follows.
const cliMaxPages = 1000

// list follows next_cursor from path (with its query q) and returns every
// item.
func (c *cliClient) list(ctx context.Context, path string, q url.Values) ([]json.RawMessage, error) {
	var items []json.RawMessage
	for range cliMaxPages {
		var p cliPage
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

// cliPath builds an API path from a fixed prefix and one id, escaped.
func cliPath(prefix, id string) string {
	return prefix + url.PathEscape(strings.TrimSpace(id))
}

// cliFail prints err for command name and returns the exit code.
func cliFail(env cliEnv, name string, err error) int {
	fmt.Fprintf(env.stderr, "countersign %s: %v\n", name, err)
	return cliExitRefused
}
