package judge

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// apiRequest is a chat-completions request body as the OpenAI API defines
// it. The test server decodes it strictly, like the real API, which rejects
// unknown parameters.
type apiRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	ResponseFormat *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Name   string          `json:"name"`
			Strict bool            `json:"strict"`
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
	header http.Header
}

// message returns the content of the first message with role.
func (r apiRequest) message(role string) string {
	for _, m := range r.Messages {
		if m.Role == role {
			return m.Content
		}
	}
	return ""
}

// reply is one scripted answer of the test server.
type reply struct {
	content string        // message.content
	refusal string        // message.refusal
	finish  string        // finish_reason; default "stop"
	status  int           // non-zero: answer this status with an OpenAI error body
	errMsg  string        // the error message for status
	delay   time.Duration // wait before answering; ends early if the client leaves
}

// chatServer is a real HTTP server speaking the OpenAI chat-completions
// protocol with scripted answers.
type chatServer struct {
	*httptest.Server
	mu       sync.Mutex
	requests []apiRequest
	script   func(n int, req apiRequest) reply // n counts from 0
}

func newChatServer(t *testing.T, script func(n int, req apiRequest) reply) *chatServer {
	t.Helper()
	s := &chatServer{script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.Close)
	return s
}

// answering returns a server that always answers content.
func answering(t *testing.T, content string) *chatServer {
	return newChatServer(t, func(int, apiRequest) reply { return reply{content: content} })
}

func (s *chatServer) handle(w http.ResponseWriter, r *http.Request) {
	req, err := decodeAPIRequest(r)
	if err != nil {
		writeAPIError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	s.answer(w, r, s.script(n, req))
}

func decodeAPIRequest(r *http.Request) (apiRequest, error) {
	var req apiRequest
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		return req, fmt.Errorf("unknown endpoint %s %s", r.Method, r.URL.Path)
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		return req, fmt.Errorf("content type must be application/json")
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, fmt.Errorf("invalid body: %v", err)
	}
	req.header = r.Header.Clone()
	return req, validateAPIRequest(req)
}

func validateAPIRequest(req apiRequest) error {
	if req.Model == "" || len(req.Messages) == 0 {
		return fmt.Errorf("you must provide a model parameter and messages")
	}
	for _, m := range req.Messages {
		if m.Role != "system" && m.Role != "user" && m.Role != "assistant" {
			return fmt.Errorf("invalid role %q", m.Role)
		}
	}
	rf := req.ResponseFormat
	if rf != nil && rf.Type == "json_schema" && (rf.JSONSchema == nil || rf.JSONSchema.Name == "" || len(rf.JSONSchema.Schema) == 0) {
		return fmt.Errorf("response_format.json_schema needs a name and a schema")
	}
	return nil
}

func (s *chatServer) answer(w http.ResponseWriter, r *http.Request, rp reply) {
	if rp.delay > 0 {
		select {
		case <-time.After(rp.delay):
		case <-r.Context().Done():
			return
		}
	}
	if rp.status != 0 {
		writeAPIError(w, rp.status, rp.errMsg)
		return
	}
	writeCompletion(w, rp)
}

func writeCompletion(w http.ResponseWriter, rp reply) {
	msg := map[string]any{"role": "assistant", "content": rp.content}
	if rp.refusal != "" {
		msg["content"], msg["refusal"] = nil, rp.refusal
	}
	finish := rp.finish
	if finish == "" {
		finish = "stop"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000, "model": "judge-test",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
	})
}

func writeAPIError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil},
	})
}

func (s *chatServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

func (s *chatServer) request(i int) apiRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[i]
}

// config returns a Config for s with short timeouts.
func (s *chatServer) config() Config {
	return Config{BaseURL: s.URL + "/v1", Model: "judge-test", Timeout: 2 * time.Second}
}

// modelAnswer is the JSON a model gives.
func modelAnswer(verdict, quote string, evidence []string, rationale string) string {
	if evidence == nil {
		evidence = []string{}
	}
	b, err := json.Marshal(map[string]any{"verdict": verdict, "quote": quote, "evidence": evidence, "rationale": rationale})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// eventually polls cond until it holds or a second has passed.
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
