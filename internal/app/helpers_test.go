package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/app"
	"github.com/countersign/countersign/internal/testkit/servertest"
	"github.com/countersign/countersign/internal/testkit/testutil"
)

type client struct {
	url, token string
	http       *http.Client
}

func newClient(url, token string) *client {
	return &client{url: url, token: token, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

// do sends a JSON request and decodes the JSON answer into out (if not nil).
func (c *client) do(t testing.TB, method, path string, body any, hdr map[string]string, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, c.url+path, rd)
	req.Header.Set("Authorization", "Bearer "+c.token)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return 0
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

type record struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	Revision   uint64 `json:"revision"`
	CallDigest string `json:"call_digest"`
	Approver   *struct {
		Kind, ID string
	} `json:"approver"`
	Decision *struct {
		Status string
		By     struct{ Kind, ID string }
	} `json:"decision"`
}

func refund(i int) map[string]any {
	return map[string]any{"tool": "issue_refund", "arguments": map[string]any{"payment_id": i, "amount": 4900, "currency": "GBP"}, "timeout": "1h"}
}

// awaitInterest waits until the embedded server has a subscriber for
// subject (a runtime started by the app subscribes on its own goroutine),
// so that a message sent next meets it instead of "no responders".
func awaitInterest(t testing.TB, srv *servertest.Server, subject string) {
	t.Helper()
	acc := srv.App.Broker.Server.GlobalAccount()
	testutil.Eventually(t, 10*time.Second, func() bool { return acc.SubscriptionInterest(subject) }, "a subscriber for "+subject)
}

// launch builds a process (app.New) and runs it (App.Run) until the test
// stops it with Shutdown; it returns once everything serves, or the error
// that stopped the build or the start. ctx bounds those only.
func launch(ctx context.Context, o app.Options) (*app.App, error) {
	a, err := app.New(ctx, o)
	if err != nil {
		return nil, err
	}
	ran := make(chan error, 1)
	go func() { ran <- a.Run(context.WithoutCancel(ctx)) }()
	select {
	case <-a.Started():
		return a, nil
	case err := <-ran:
		return nil, errors.Join(errors.New("stopped while starting"), err)
	case <-ctx.Done():
		_ = a.Shutdown(context.WithoutCancel(ctx))
		return nil, ctx.Err()
	}
}
