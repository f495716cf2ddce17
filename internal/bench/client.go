package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// client speaks the API with one token.
type client struct {
	url, token string
	http       *http.Client
}

func newHTTPClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns,
		MaxConnsPerHost: conns, DisableCompression: true}}
}

type record struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Revision uint64 `json:"revision"`
	Decision *struct {
		By struct {
			Kind string `json:"kind"`
		} `json:"by"`
	} `json:"decision"`
}

// call sends body (if any) and decodes a JSON record; a status other than
// want is an error.
func (c *client) call(ctx context.Context, method, path string, body []byte, want int) (record, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, rd)
	if err != nil {
		return record{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return record{}, err
	}
	defer resp.Body.Close()
	var r record
	if resp.StatusCode != want {
		b, _ := io.ReadAll(resp.Body)
		return r, fmt.Errorf("%s %s: status %d: %s", method, path, resp.StatusCode, bytes.TrimSpace(b))
	}
	return r, json.NewDecoder(resp.Body).Decode(&r)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// randSuffix keeps idempotency keys of separate runs apart.
var randSuffix = time.Now().UnixNano()

// callWithKey submits with an Idempotency-Key.
func (c *client) callWithKey(ctx context.Context, body []byte, key string) (record, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", c.url+"/v1/requests", bytes.NewReader(body))
	if err != nil {
		return record{}, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Idempotency-Key", key)
	resp, err := c.http.Do(req)
	if err != nil {
		return record{}, err
	}
	defer resp.Body.Close()
	var r record
	if resp.StatusCode != http.StatusCreated {
		return r, fmt.Errorf("submit: status %d", resp.StatusCode)
	}
	return r, json.NewDecoder(resp.Body).Decode(&r)
}

// metric scrapes one unlabelled sample from /metrics.
func metric(ctx context.Context, url, name string) (float64, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", url+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			return strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	return 0, fmt.Errorf("bench: metric %s not served", name)
}

// list GETs one page of a list and reads it whole.
func (c *client) list(ctx context.Context, path string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", c.url+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: status %d: %s", path, resp.StatusCode, bytes.TrimSpace(b))
	}
	return err
}
