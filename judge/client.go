package judge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
)

// Prompt is one model call: instructions, data, and the JSON schema the
// answer must follow.
type Prompt struct {
	System string          // instructions; never contains request data
	User   string          // the delimited, escaped data
	Schema json.RawMessage // JSON schema of the answer object
}

// Model is the one thing the judge needs from a model client.
//
// Complete returns the model's answer text for p. It must honour ctx (the
// judge bounds every call with it, and returns at the deadline regardless).
// Errors should wrap [ErrTimeout], [ErrHTTP], [ErrRefusal] or [ErrMalformed];
// context errors count as timeouts, and any other error as an HTTP error.
// The text is untrusted: the judge parses and verifies it.
type Model interface {
	Complete(ctx context.Context, p Prompt) (string, error)
}

var _ Model = (*ChatModel)(nil)

// maxResponseBytes bounds how much of a response body is read.
const maxResponseBytes = 1 << 20

// ChatModel is a [Model] for OpenAI-compatible chat-completions endpoints
// (OpenAI, vLLM, Ollama, gateways). Safe for concurrent use.
type ChatModel struct {
	url    string
	model  string
	apiKey string
	client *http.Client
	// plain is set once the endpoint rejected response_format; later calls
	// are sent without it. The answer is validated locally either way.
	plain atomic.Bool
}

// NewChatModel returns a ChatModel for cfg.BaseURL, Model, APIKey and
// HTTPClient (default: a client without a timeout of its own).
func NewChatModel(cfg Config) *ChatModel {
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	url := strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions"
	return &ChatModel{url: url, model: cfg.Model, apiKey: cfg.APIKey, client: client}
}

// Complete posts p to {BaseURL}/chat/completions with a strict json_schema
// response_format. If the endpoint answers 400 naming response_format, it
// retries once without it. Errors wrap ErrTimeout, ErrHTTP, ErrRefusal or
// ErrMalformed.
func (c *ChatModel) Complete(ctx context.Context, p Prompt) (string, error) {
	withSchema := len(p.Schema) > 0 && !c.plain.Load()
	text, err := c.post(ctx, p, withSchema)
	if errors.Is(err, errSchemaRejected) {
		c.plain.Store(true)
		return c.post(ctx, p, false)
	}
	return text, err
}

// errSchemaRejected: a 400 that names response_format; Complete retries.
var errSchemaRejected = fmt.Errorf("%w: response_format rejected", ErrHTTP)

func (c *ChatModel) post(ctx context.Context, p Prompt, withSchema bool) (string, error) {
	req, err := c.newRequest(ctx, p, withSchema)
	if err != nil {
		return "", err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return "", transportError(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return "", transportError(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", statusError(resp.StatusCode, body, withSchema)
	}
	return parseCompletion(body)
}

func (c *ChatModel) newRequest(ctx context.Context, p Prompt, withSchema bool) (*http.Request, error) {
	body, err := json.Marshal(newChatRequest(c.model, p, withSchema))
	if err != nil {
		return nil, fmt.Errorf("%w: encode request: %w", ErrHTTP, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHTTP, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.apiKey)
	}
	return req, nil
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatJSONSchema struct {
	Name   string          `json:"name"`
	Strict bool            `json:"strict"`
	Schema json.RawMessage `json:"schema"`
}

type chatResponseFormat struct {
	Type       string          `json:"type"`
	JSONSchema *chatJSONSchema `json:"json_schema,omitempty"`
}

type chatRequest struct {
	Model          string              `json:"model"`
	Messages       []chatMessage       `json:"messages"`
	ResponseFormat *chatResponseFormat `json:"response_format,omitempty"`
}

func newChatRequest(model string, p Prompt, withSchema bool) chatRequest {
	r := chatRequest{Model: model, Messages: []chatMessage{
		{Role: "system", Content: p.System},
		{Role: "user", Content: p.User},
	}}
	if withSchema {
		r.ResponseFormat = &chatResponseFormat{Type: "json_schema",
			JSONSchema: &chatJSONSchema{Name: "verdict", Strict: true, Schema: p.Schema}}
	}
	return r
}

type chatCompletion struct {
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
			Refusal *string `json:"refusal"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
}

// parseCompletion returns the first choice's content, or ErrRefusal /
// ErrMalformed.
func parseCompletion(body []byte) (string, error) {
	var c chatCompletion
	if err := json.Unmarshal(body, &c); err != nil {
		return "", fmt.Errorf("%w: completion: %w", ErrMalformed, err)
	}
	if len(c.Choices) == 0 {
		return "", fmt.Errorf("%w: completion has no choices", ErrMalformed)
	}
	choice := c.Choices[0]
	if choice.Message.Refusal != nil && strings.TrimSpace(*choice.Message.Refusal) != "" {
		return "", ErrRefusal
	}
	if choice.FinishReason == "content_filter" {
		return "", fmt.Errorf("%w: content filter", ErrRefusal)
	}
	if choice.Message.Content == nil {
		return "", fmt.Errorf("%w: completion has no content", ErrMalformed)
	}
	return *choice.Message.Content, nil
}

func transportError(err error) error {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Errorf("%w: %w", ErrTimeout, err)
	}
	return fmt.Errorf("%w: %w", ErrHTTP, err)
}

func statusError(status int, body []byte, withSchema bool) error {
	if withSchema && status == http.StatusBadRequest && mentionsResponseFormat(body) {
		return errSchemaRejected
	}
	return fmt.Errorf("%w: status %d: %s", ErrHTTP, status, snippet(body))
}

func mentionsResponseFormat(body []byte) bool {
	s := strings.ToLower(string(body))
	return strings.Contains(s, "response_format") || strings.Contains(s, "json_schema")
}

// snippet is a short, single-line excerpt of an error body for messages.
func snippet(body []byte) string {
	const limit = 200
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(body), "?")), " ")
	if len(s) > limit {
		s = strings.ToValidUTF8(s[:limit], "") + "…"
	}
	return s
}
