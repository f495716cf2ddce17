package problem_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/countersign/countersign/problem"
)

var errConflict = problem.New(409, "RequestConflict", "request conflict")

func TestCopiesAreTheirSentinel(t *testing.T) {
	for _, err := range []error{
		errConflict.With("request is approved"),
		errConflict.Withf("expected revision %d", 3),
		errConflict.WithReason("digest_mismatch"),
		errConflict.Wrap(errors.New("kv: revision")),
		fmt.Errorf("answer: %w", errConflict.With("late")),
		errors.Join(errConflict, errors.New("kv down")),
	} {
		if !errors.Is(err, errConflict) {
			t.Errorf("errors.Is(%v, errConflict) = false, want true", err)
		}
	}
	if errors.Is(problem.New(409, "Other", "x"), errConflict) || errors.Is(problem.New(404, "RequestConflict", "x"), errConflict) {
		t.Error("an *Error of another code or status is errConflict")
	}
	if errConflict.Detail != "request conflict" || errConflict.Reason != "" {
		t.Errorf("a copy changed the sentinel: %+v", errConflict)
	}
}

func TestWrapKeepsItsCause(t *testing.T) {
	cause := errors.New("nats: timeout")
	err := problem.New(503, "Unavailable", "state unavailable").Wrap(cause)
	if !errors.Is(err, cause) {
		t.Error("errors.Is does not see the cause")
	}
	if got, want := err.Error(), "Unavailable: state unavailable: nats: timeout"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if p := problem.From(err); p.Detail != "state unavailable" {
		t.Errorf("the cause reached the client: detail %q", p.Detail)
	}
}

func TestFrom(t *testing.T) {
	cases := []struct {
		name                string
		err                 error
		status              int
		code, field, reason string
		detail              string
	}{
		{"unknown is internal", errors.New("approvals: secret path /var/x"), 500, "Internal", "", "", "the server failed unexpectedly"},
		{"an error's text is never read", errors.New("RequestConflict: request is approved"), 500, "Internal", "", "", "the server failed unexpectedly"},
		{"wrapped", fmt.Errorf("submit: %w", errConflict.With("late")), 409, "RequestConflict", "", "", "late"},
		{"joined", errors.Join(errors.New("kv"), problem.New(503, "Unavailable", "state unavailable")), 503, "Unavailable", "", "", "state unavailable"},
		{"invalid names its field", problem.Invalid("expected", "required"), 400, "InvalidRequest", "expected", "", "required"},
		{"reason", errConflict.With("cannot claim").WithReason("already_claimed"), 409, "RequestConflict", "", "already_claimed", "cannot claim"},
	}
	for _, c := range cases {
		p := problem.From(c.err)
		if p.Status != c.status || p.Error != c.code || p.Field != c.field || p.Reason != c.reason || p.Detail != c.detail {
			t.Errorf("%s: got %d %s field=%q reason=%q detail=%q, want %d %s field=%q reason=%q detail=%q", c.name,
				p.Status, p.Error, p.Field, p.Reason, p.Detail, c.status, c.code, c.field, c.reason, c.detail)
		}
		if p.Type != problem.TypeBase+c.code || p.Title == "" {
			t.Errorf("%s: type %q title %q", c.name, p.Type, p.Title)
		}
	}
}

// The body is SPEC §5's, field for field and in this order; empty detail,
// field and reason are left out.
func TestJSONShape(t *testing.T) {
	for _, c := range []struct {
		err  *problem.Error
		want string
	}{
		{problem.Invalid("scope", "unknown scope"),
			`{"type":"https://countersign.dev/problems/InvalidRequest","title":"Bad Request","status":400,"detail":"unknown scope","error":"InvalidRequest","field":"scope"}`},
		{errConflict.With("x").WithReason("digest_mismatch"),
			`{"type":"https://countersign.dev/problems/RequestConflict","title":"Conflict","status":409,"detail":"x","error":"RequestConflict","reason":"digest_mismatch"}`},
		{problem.New(404, "NotFound", ""),
			`{"type":"https://countersign.dev/problems/NotFound","title":"Not Found","status":404,"error":"NotFound"}`},
	} {
		b, err := json.Marshal(problem.From(c.err))
		if err != nil || string(b) != c.want {
			t.Errorf("got %s (%v), want %s", b, err, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	sent := errConflict.With("request is approved").WithReason("not_approved")
	body, _ := json.Marshal(problem.From(sent))
	got := problem.Parse(409, body)
	if *got != *sent || !errors.Is(got, errConflict) {
		t.Errorf("Parse gave %+v, want %+v", got, sent)
	}
	if got := problem.Parse(502, []byte("<html>bad gateway</html>")); got.Status != 502 || got.Code != "" || got.Detail != "" {
		t.Errorf("a body that is not a problem: %+v", got)
	}
	if got := problem.Parse(503, []byte(`{"status":200,"error":"Unavailable"}`)); got.Status != 503 {
		t.Errorf("the body's status won over the answer's: %d", got.Status)
	}
	if got, want := problem.Parse(502, nil).Error(), "HTTP 502"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := problem.Invalid("f", "d").WithReason("r").Error(); !strings.Contains(got, "(field f)") || !strings.Contains(got, "(reason r)") {
		t.Errorf("Error() = %q, want the field and reason", got)
	}
}

func TestRetryable(t *testing.T) {
	for status, want := range map[int]bool{429: true, 503: true, 500: false, 409: false} {
		if got := problem.New(status, "X", "").Problem().Retryable(); got != want {
			t.Errorf("Retryable(%d) = %v, want %v", status, got, want)
		}
	}
}
