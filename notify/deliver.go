package notify

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	retry "github.com/countersign/countersign/backoff"
)

// newClient is one endpoint's HTTP client: its own connections, a timeout
// on every phase, and no redirects (a 3xx is a failed attempt: the body
// is signed for the configured URL only).
func newClient(t Tuning) *http.Client {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: t.Timeout}).DialContext,
		TLSClientConfig:       t.TLS,
		TLSHandshakeTimeout:   t.Timeout,
		ResponseHeaderTimeout: t.Timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       time.Minute,
	}
	return &http.Client{Transport: tr, Timeout: t.Timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// post makes one attempt, signed at now; nil only for a 2xx answer. At
// most max bytes of the answer are read.
func post(ctx context.Context, c *http.Client, e *Endpoint, it *item, contentType string, body []byte, max int64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("User-Agent", "countersign-webhooks")
	if len(e.Key) > 0 {
		Sign(req.Header, e.Key, it.id, time.Now(), body)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, max))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("notify: %s answered %d", e.URL, resp.StatusCode)
	}
	return nil
}

// backoff is the wait after failed attempt n (1-based): base·2^(n-1),
// capped, then jittered to between half and all of it (package backoff).
func backoff(t Tuning, n int) time.Duration {
	return retry.Policy{Base: t.BackoffBase, Max: t.BackoffMax, Jitter: true}.Delay(n)
}
