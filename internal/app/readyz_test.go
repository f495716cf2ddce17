package app_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/countersign/countersign/internal/testkit/testutil"
	"github.com/countersign/countersign/kvstate"
)

// TestReadyzNeedsWritableBuckets: /readyz is 503 while a bucket every
// write needs cannot take one (here the idempotency bucket is gone; on a
// cluster, a bucket whose leader was lost), naming it, and 200 again once
// it can (SPEC §5: ready once the server can take requests).
func TestReadyzNeedsWritableBuckets(t *testing.T) {
	a := startApp(t, t.TempDir(), "api")
	defer stopApp(t, a)
	url := "http://" + a.Addr()
	testutil.Eventually(t, 10*time.Second, func() bool { return readyz(url) == http.StatusOK }, "ready at start")
	ctx := context.Background()
	if err := a.Broker.JS.DeleteKeyValue(ctx, kvstate.BucketIdempotency); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool {
		code, body := readyzBody(url)
		return code == http.StatusServiceUnavailable && strings.Contains(body, "idempotency")
	}, "503 naming the idempotency bucket")
	if _, err := kvstate.Open(ctx, kvstate.Config{JS: a.Broker.JS, Replicas: 1}); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, func() bool { return readyz(url) == http.StatusOK }, "ready again")
}
