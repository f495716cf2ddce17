package judge

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestChatModelRequest(t *testing.T) {
	srv := answering(t, modelAnswer("escalate", "", nil, ""))
	cfg := srv.config()
	cfg.APIKey = "sk-test"
	New(cfg).Judge(context.Background(), refundRules, refundCall(smallRefund))
	cfg.APIKey = ""
	New(cfg).Judge(context.Background(), refundRules, refundCall(smallRefund))

	req := srv.request(0)
	if got := req.header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q, want Bearer sk-test", got)
	}
	if got := srv.request(1).header.Get("Authorization"); got != "" {
		t.Errorf("Authorization without key = %q, want none", got)
	}
	if req.Model != "judge-test" || len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[1].Role != "user" {
		t.Errorf("request = %+v", req)
	}
	rf := req.ResponseFormat
	if rf == nil || rf.Type != "json_schema" || rf.JSONSchema == nil || rf.JSONSchema.Name != "verdict" || !rf.JSONSchema.Strict {
		t.Fatalf("response_format = %+v", rf)
	}
	var schema struct {
		Required   []string `json:"required"`
		Properties struct {
			Verdict struct {
				Enum []string `json:"enum"`
			} `json:"verdict"`
		} `json:"properties"`
		AdditionalProperties bool `json:"additionalProperties"`
	}
	if err := json.Unmarshal(rf.JSONSchema.Schema, &schema); err != nil || len(schema.Required) != 4 ||
		strings.Join(schema.Properties.Verdict.Enum, ",") != "allow,deny,escalate" || schema.AdditionalProperties {
		t.Errorf("schema = %s (%v)", rf.JSONSchema.Schema, err)
	}
}

func TestChatModelRetriesWithoutResponseFormat(t *testing.T) {
	srv := newChatServer(t, func(_ int, req apiRequest) reply {
		if req.ResponseFormat != nil {
			return reply{status: 400, errMsg: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."}
		}
		return reply{content: modelAnswer("allow", ruleRefund, []string{"42.50"}, "")}
	})
	j := New(srv.config())
	for range 2 {
		checkOutcome(t, judgeOnce(j), Allow, ReasonVerified, "rul_refund")
	}
	if srv.count() != 3 || srv.request(1).ResponseFormat != nil || srv.request(2).ResponseFormat != nil {
		t.Errorf("server saw %d calls; want 3: one with response_format, then none", srv.count())
	}
}

func TestChatModelOther400IsHTTPError(t *testing.T) {
	srv := newChatServer(t, func(int, apiRequest) reply { return reply{status: 400, errMsg: "context length exceeded"} })
	checkOutcome(t, judgeOnce(New(srv.config())), Escalate, ReasonHTTPError, "")
	if srv.count() != 1 {
		t.Errorf("server saw %d calls, want 1 (no retry)", srv.count())
	}
}

func TestChatModelErrors(t *testing.T) {
	tests := []struct {
		name string
		rp   reply
		want error
	}{
		{"server error", reply{status: 502, errMsg: "bad gateway"}, ErrHTTP},
		{"refusal", reply{refusal: "No."}, ErrRefusal},
		{"content filter", reply{finish: "content_filter"}, ErrRefusal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newChatServer(t, func(int, apiRequest) reply { return tt.rp })
			_, err := NewChatModel(srv.config()).Complete(context.Background(), Prompt{System: "s", User: "u"})
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestParseCompletionMalformed(t *testing.T) {
	for _, body := range []string{`not json`, `{"choices":[]}`, `{"choices":[{"message":{"content":null}}]}`} {
		if _, err := parseCompletion([]byte(body)); !errors.Is(err, ErrMalformed) {
			t.Errorf("parseCompletion(%s) = %v, want ErrMalformed", body, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	good := Config{BaseURL: "http://127.0.0.1:11434/v1", Model: "llama3"}
	if err := good.Validate(); err != nil {
		t.Errorf("Validate(%+v) = %v", good, err)
	}
	for _, bad := range []Config{
		{BaseURL: "127.0.0.1:11434", Model: "m"},
		{BaseURL: "http://h/v1"},
		{BaseURL: "http://h/v1", Model: "m", Timeout: -1},
	} {
		if err := bad.Validate(); !errors.Is(err, ErrConfig) {
			t.Errorf("Validate(%+v) = %v, want ErrConfig", bad, err)
		}
	}
}
