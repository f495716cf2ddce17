package adapter

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/countersign/countersign/domain"
)

func TestPlan(t *testing.T) {
	tests := []struct {
		name               string
		limit, margin, req time.Duration
		wantTimeout        time.Duration
		wantLimit          time.Duration
	}{
		{"no limit keeps the request", 0, 15 * time.Second, time.Hour, time.Hour, 0},
		{"no limit, no timeout", 0, 15 * time.Second, 0, 0, 0},
		{"limit shortens", 540 * time.Second, 15 * time.Second, time.Hour, 525 * time.Second, 532500 * time.Millisecond},
		{"shorter request kept", 540 * time.Second, 15 * time.Second, time.Minute, time.Minute, 532500 * time.Millisecond},
		{"limit fills in a missing timeout", 60 * time.Second, 15 * time.Second, 0, 45 * time.Second, 52500 * time.Millisecond},
		{"margin at most a quarter", 4 * time.Second, 15 * time.Second, 0, 3 * time.Second, 3500 * time.Millisecond},
		{"never under the server's 1s", 1 * time.Second, 15 * time.Second, 0, time.Second, 875 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Client{waitLimit: tt.limit, margin: tt.margin}
			p := c.plan(context.Background(), tt.req)
			if p.timeout != tt.wantTimeout || p.limit != tt.wantLimit {
				t.Errorf("got timeout %v, give up at %v; want %v, %v", p.timeout, p.limit, tt.wantTimeout, tt.wantLimit)
			}
		})
	}
}

func TestPlanContextDeadlineIsALimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := &Client{waitLimit: time.Hour, margin: 4 * time.Second}
	p := c.plan(ctx, 0)
	if p.timeout > 16*time.Second || p.limit > 18*time.Second {
		t.Errorf("got timeout %v, give up at %v; want them inside the context's 20s", p.timeout, p.limit)
	}
}

func TestServerClock(t *testing.T) {
	local := time.Date(2026, 9, 16, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		dates []time.Time // each observed for a request sent at local
		want  time.Duration
	}{
		{"no Date: local clock", nil, 0},
		{"server 10m ahead", []time.Time{local.Add(10 * time.Minute)}, 10*time.Minute + time.Second},
		{"server 10m behind", []time.Time{local.Add(-10 * time.Minute)}, -10*time.Minute + time.Second},
		{"tightest bound wins", []time.Time{local.Add(30 * time.Second), local}, time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := newServerClock(func() time.Time { return local })
			for _, d := range tt.dates {
				sc.observe(local, d.Format(http.TimeFormat))
			}
			if got := sc.serverNow().Sub(local); got != tt.want {
				t.Errorf("server now - local = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCallValidate(t *testing.T) {
	tests := []struct {
		name string
		call Call
		ok   bool
	}{
		{"tool", Call{Tool: "x", Arguments: json.RawMessage(`{}`)}, true},
		{"capability", Call{Capability: domain.Capability{Action: "apps.call", Target: "c/t"}, Arguments: json.RawMessage(`{"a":1}`)}, true},
		{"both", Call{Tool: "x", Capability: domain.Capability{Action: "a", Target: "b"}, Arguments: json.RawMessage(`{}`)}, false},
		{"none", Call{Arguments: json.RawMessage(`{}`)}, false},
		{"array arguments", Call{Tool: "x", Arguments: json.RawMessage(`[1]`)}, false},
		{"null arguments", Call{Tool: "x", Arguments: json.RawMessage(`null`)}, false},
		{"missing arguments", Call{Tool: "x"}, false},
		{"two objects", Call{Tool: "x", Arguments: json.RawMessage(`{} {}`)}, false},
		{"timeout under 1s", Call{Tool: "x", Arguments: json.RawMessage(`{}`), Timeout: time.Millisecond}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call.validate()
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrInvalidCall)) {
				t.Errorf("validate() = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		name     string
		n        int
		hint     time.Duration
		min, max time.Duration // bounds of the delay
	}{
		{"first", 0, 0, 50 * time.Millisecond, 100 * time.Millisecond},
		{"grows", 3, 0, 400 * time.Millisecond, 800 * time.Millisecond},
		{"capped", 20, 0, 2500 * time.Millisecond, 5 * time.Second},
		{"Retry-After honoured", 0, 3 * time.Second, 3 * time.Second, 3 * time.Second},
		{"Retry-After capped", 0, time.Hour, maxRetryAfter, maxRetryAfter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := &backoff{min: 100 * time.Millisecond, max: 5 * time.Second, n: tt.n}
			if got := b.next(tt.hint); got < tt.min || got > tt.max {
				t.Errorf("next = %v, want within %v..%v", got, tt.min, tt.max)
			}
		})
	}
}

// TestDefaultConnectScheduleIsAboutTenSeconds: with nothing listening, the
// default schedule gives up within about 10 s (refused dials take no time).
func TestDefaultConnectScheduleIsAboutTenSeconds(t *testing.T) {
	var total time.Duration
	for _, d := range DefaultConnectRetries {
		total += d
	}
	if len(DefaultConnectRetries) < 3 || total < 5*time.Second || total > 10*time.Second {
		t.Errorf("default connect schedule %v: %d retries over %v, want a few retries within 5s..10s",
			DefaultConnectRetries, len(DefaultConnectRetries), total)
	}
	c, err := New("http://127.0.0.1:1", "t")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.connectRetries) != len(DefaultConnectRetries) {
		t.Errorf("a new client's schedule %v, want the default", c.connectRetries)
	}
}
