package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// maxReport bounds a replay's report: a candidate that changes each of a
// fill's 100,000 requests answers with about 50 MB.
const maxReport = 1 << 30

// ReplayPolicy asks the server what the candidate config file yaml would
// have done with the caller's tenant's requests of the last since (POST
// /v1/policy/replay, SPEC §16) and returns the report's JSON. tenant, when
// not "", must be the caller's. A long log takes its time: only ctx ends
// the wait. Errors: *problem.Error when the server refused, or a
// transport error.
func (c *Client) ReplayPolicy(ctx context.Context, yaml []byte, since, tenant string) ([]byte, error) {
	body := map[string]string{"config": string(yaml)}
	if since != "" {
		body["since"] = since
	}
	if tenant != "" {
		body["tenant"] = tenant
	}
	req, err := c.newRequest(ctx, http.MethodPost, "/v1/policy/replay", body)
	if err != nil {
		return nil, err
	}
	hc := *c.http
	hc.Timeout = 0
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("cannot reach countersign at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReport+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading the replay's report: %w", err)
	case len(raw) > maxReport:
		return nil, fmt.Errorf("the replay's report is larger than %d MiB: narrow --since", maxReport>>20)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, refusal(resp.StatusCode, raw)
	}
	return raw, nil
}
