package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// ExportAudit copies the caller's tenant's audit log after entry after
// (GET /v1/audit, JSON Lines) to w as the server streams it, whatever its
// size. Errors: *problem.Error when the server refused, or a transport or
// write error.
func (c *Client) ExportAudit(ctx context.Context, after uint64, w io.Writer) error {
	path := "/v1/audit"
	if after > 0 {
		path += "?after=" + strconv.FormatUint(after, 10)
	}
	req, err := c.newRequest(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	hc := *c.http
	hc.Timeout = 0 // a year's log takes its time; ctx ends it
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach countersign at %s: %w", c.base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
		return refusal(resp.StatusCode, raw)
	}
	_, err = io.Copy(w, resp.Body)
	return err
}
