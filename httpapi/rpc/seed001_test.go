package rpc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// This file is a client of /v1/rpc written from the protocol's schema alone (SPEC §8)
// (ApprovalRequestParams, approval/request answered by its result,
// session/resume, view/page): its types are its own, and it uses nothing
// of the server's packages nor of this package's other helpers. The
// agent side (submitting calls over HTTP) is the test's.

// seedParams is the schema's ApprovalRequestParams.
type seedParams struct {
	ApprovalID           string          `json:"approvalId"`
	AvailableChoices     []seedChoice    `json:"availableChoices"`
	CuaCardFacts         json.RawMessage `json:"cuaCardFacts"`
	CurrentRequirementID json.RawMessage `json:"currentRequirementId"`
	ItemID               string          `json:"itemId"`
	JudgeEscalated       bool            `json:"judgeEscalated"`
	ProtectedWrite       bool            `json:"protectedWrite"`
	RawArgs              string          `json:"rawArgs"`
	ReviewerReason       *string         `json:"reviewerReason"`
	SessionID            string          `json:"sessionId"`
	SourceRange          json.RawMessage `json:"sourceRange"`
	SubagentOrigin       json.RawMessage `json:"subagentOrigin"`
	Subject              json.RawMessage `json:"subject"`
	TaskID               string          `json:"taskId"`
	ToolCallID           string          `json:"toolCallId"`
	ToolName             string          `json:"toolName"`
	TurnID               string          `json:"turnId"`
	ViewCursor           string          `json:"viewCursor"`
}

// seedRequired are the schema's required fields.
var seedRequired = []string{"approvalId", "availableChoices", "currentRequirementId", "itemId", "judgeEscalated",
	"protectedWrite", "rawArgs", "sessionId", "sourceRange", "subject", "taskId", "toolCallId", "toolName", "turnId", "viewCursor"}

type seedChoice struct {
	ChoiceID string `json:"choiceId"`
}

// seedMessage is any JSON-RPC 2.0 message.
type seedMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *seedError      `json:"error,omitempty"`
}

type seedError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// seedPage is view/page's result: events from the cursor on.
type seedPage struct {
	Events []struct {
		Cursor string          `json:"cursor"`
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	} `json:"events"`
	NextCursor string `json:"nextCursor"`
}

// seedClient is the client: the server's requests and notifications
// read while it waits for a response are queued for next.
type seedClient struct {
	t      *testing.T
	c      *websocket.Conn
	n      int
	queued []seedMessage
}

func seedDial(t *testing.T, base, token string) *seedClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	url := "ws" + strings.TrimPrefix(base, "http") + "/v1/rpc"
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatalf("seed client: dial: %v", err)
	}
	c.SetReadLimit(16 << 20)
	t.Cleanup(func() { _ = c.CloseNow() })
	return &seedClient{t: t, c: c}
}

func (s *seedClient) write(m seedMessage) {
	s.t.Helper()
	m.JSONRPC = "2.0"
	b, _ := json.Marshal(m)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.c.Write(ctx, websocket.MessageText, b); err != nil {
		s.t.Fatalf("seed client: write: %v", err)
	}
}

func (s *seedClient) read() seedMessage {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := s.c.Read(ctx)
	if err != nil {
		s.t.Fatalf("seed client: read: %v", err)
	}
	var m seedMessage
	if err := json.Unmarshal(b, &m); err != nil || m.JSONRPC != "2.0" {
		s.t.Fatalf("seed client: not JSON-RPC 2.0: %s", b)
	}
	return m
}

// call sends a request and returns its response.
func (s *seedClient) call(method string, params any, result any) *seedError {
	s.t.Helper()
	s.n++
	id, _ := json.Marshal(s.n)
	p, _ := json.Marshal(params)
	s.write(seedMessage{ID: id, Method: method, Params: p})
	for {
		m := s.read()
		if m.Method == "" && string(m.ID) == string(id) {
			if m.Error == nil && result != nil {
				if err := json.Unmarshal(m.Result, result); err != nil {
					s.t.Fatalf("seed client: %s result: %v", method, err)
				}
			}
			return m.Error
		}
		s.queued = append(s.queued, m)
	}
}

// next is the server's next request or notification.
func (s *seedClient) next() seedMessage {
	s.t.Helper()
	if len(s.queued) > 0 {
		m := s.queued[0]
		s.queued = s.queued[1:]
		return m
	}
	return s.read()
}

// approval reads the next message, which must be method, and its params
// with every required field of the schema.
func (s *seedClient) approval(method string) (seedMessage, seedParams) {
	s.t.Helper()
	m := s.next()
	if m.Method != method {
		s.t.Fatalf("seed client: got %s (%s), want %s", m.Method, m.Params, method)
	}
	return m, seedDecode(s.t, m.Params)
}

func seedDecode(t *testing.T, raw json.RawMessage) seedParams {
	t.Helper()
	var fields map[string]json.RawMessage
	var p seedParams
	if json.Unmarshal(raw, &fields) != nil || json.Unmarshal(raw, &p) != nil {
		t.Fatalf("seed client: params %s", raw)
	}
	for _, f := range seedRequired {
		if _, ok := fields[f]; !ok {
			t.Errorf("seed client: required %s missing: %s", f, raw)
		}
	}
	return p
}

// answer answers an approval/request with the choice.
func (s *seedClient) answer(req seedMessage, choiceID string) {
	s.t.Helper()
	res, _ := json.Marshal(map[string]string{"choiceId": choiceID})
	s.write(seedMessage{ID: req.ID, Result: res})
}

// resolved reads approval/resolved for id.
func (s *seedClient) resolved(id string) {
	s.t.Helper()
	m := s.next()
	var p struct {
		ApprovalID string `json:"approvalId"`
	}
	_ = json.Unmarshal(m.Params, &p)
	if m.Method != "approval/resolved" || p.ApprovalID != id {
		s.t.Fatalf("seed client: got %s %s, want approval/resolved of %s", m.Method, m.Params, id)
	}
}

// TestSeed001Client: the seed client follows a session with
// session/resume, answers approval/request with its result, loses its
// connection and the server restarts meanwhile, then reconnects: a
// session/resume re-sends what still waits (judgeEscalated false), and
// view/page from the first viewCursor it saw returns every event of the
// session in order, what it missed included.
func TestSeed001Client(t *testing.T) {
	t.Parallel()
	s := start(t)
	cl := seedDial(t, s.URL, tokPerson)
	if e := cl.call("session/resume", map[string]string{"sessionId": "ses-seed"}, nil); e != nil {
		t.Fatalf("session/resume: %d %s", e.Code, e.Message)
	}
	a := submit(t, s, tokMain, map[string]any{"tool": "deploy", "session": "ses-seed", "turn": "t-1", "tool_call_id": "call-a"})["id"].(string)
	req, p := cl.approval("approval/request")
	if p.ApprovalID != a || p.ItemID != "call-a" || p.SessionID != "ses-seed" || p.ViewCursor == "" {
		t.Fatalf("approval/request %s", req.Params)
	}
	first := p.ViewCursor
	cl.answer(req, "allow_once")
	cl.resolved(a)
	if st := record(t, s, tokPerson, a)["status"]; st != "approved" {
		t.Fatalf("a after the client's result: %v", st)
	}

	b := submit(t, s, tokMain, map[string]any{"tool": "b", "session": "ses-seed"})["id"].(string)
	if _, p := cl.approval("approval/request"); p.ApprovalID != b {
		t.Fatalf("b: %s", p.ApprovalID)
	}
	_ = cl.c.CloseNow()                                                                // b is left unanswered
	submit(t, s, tokMain, map[string]any{"tool": "elsewhere", "session": "ses-other"}) // not in the session's log
	c := submit(t, s, tokMain, map[string]any{"tool": "c", "session": "ses-seed"})["id"].(string)
	s.Restart(t)

	cl = seedDial(t, s.URL, tokPerson)
	if e := cl.call("session/resume", map[string]string{"sessionId": "ses-seed"}, nil); e != nil {
		t.Fatalf("session/resume after the restart: %d %s", e.Code, e.Message)
	}
	var asks []seedMessage
	for _, id := range []string{b, c} {
		req, p := cl.approval("approval/request")
		if p.ApprovalID != id || p.JudgeEscalated {
			t.Fatalf("re-sent %s", req.Params)
		}
		asks = append(asks, req)
	}
	cl.answer(asks[0], "deny")
	cl.resolved(b)
	cl.answer(asks[1], "allow_once")
	cl.resolved(c)

	// view/page from the first cursor, two at a time, misses nothing.
	var got []string
	for cursor := first; cursor != ""; {
		var page seedPage
		if e := cl.call("view/page", map[string]any{"cursor": cursor, "limit": 2}, &page); e != nil {
			t.Fatalf("view/page %s: %d %s", cursor, e.Code, e.Message)
		}
		for _, ev := range page.Events {
			var p struct {
				ApprovalID string `json:"approvalId"`
			}
			_ = json.Unmarshal(ev.Params, &p)
			got = append(got, ev.Method+" "+p.ApprovalID)
			if ev.Method == "approval/requested" {
				seedDecode(t, ev.Params)
			}
		}
		cursor = page.NextCursor
	}
	want := []string{"approval/requested " + a, "approval/resolved " + a, "approval/requested " + b,
		"approval/requested " + c, "approval/resolved " + b, "approval/resolved " + c}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the session's log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
