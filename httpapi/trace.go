package httpapi

import (
	"context"
	"net/http"

	"github.com/countersign/countersign/kvstate"
)

// withTrace carries the request's traceparent into ctx when it is a valid
// W3C trace context; anything else is ignored, as W3C says (SPEC §5).
func withTrace(ctx context.Context, r *http.Request) context.Context {
	if tp := r.Header.Get("traceparent"); validTraceparent(tp) {
		return kvstate.WithTraceparent(ctx, tp)
	}
	return ctx
}

// validTraceparent accepts version 00 of W3C Trace Context:
// 00-<32 hex trace id, not all zero>-<16 hex parent id, not all zero>-<2
// hex flags>, lowercase.
func validTraceparent(tp string) bool {
	if len(tp) != 55 || tp[:3] != "00-" || tp[35] != '-' || tp[52] != '-' {
		return false
	}
	trace, parent, flags := tp[3:35], tp[36:52], tp[53:]
	return lowerHex(trace) && lowerHex(parent) && lowerHex(flags) && !allZero(trace) && !allZero(parent)
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}
