package inbox_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/countersign/countersign/internal/testkit/servertest"
)

// viewsScript renders records the server does not make in the demo
// (shell stages, hints, endorsements, an escalation) with the page's own
// modules, and reports what a person would read.
const viewsScript = `(async () => {
  const view = await import('/inbox/view.js');
  const text = await import('/inbox/text.js');
  const json = await import('/inbox/json.js');
  const base = {id: 'req_1', agent: 'agt_sub', capability: {action: 'tools.call', target: 'shell'}, chain: ['agt_main', 'agt_programmer', 'agt_sub'],
    status: 'pending', approver: {kind: 'person', id: 'u-1'}, revision: 3, deadline_at: new Date(Date.now() + 90e3).toISOString(),
    created_at: '2026-01-01T00:00:00Z', endorsements: [], judge_escalated: false, reviewer_reason: null, decision: null, reason: ''};
  const shell = json.decode(JSON.stringify(Object.assign({}, base, {
    subject: {kind: 'shell', command: 'ls -la && rm -rf /'},
    stages: [{text: 'ls -la', prefix: ['ls'], allowed_by: {kind: 'grant', id: 'grt_1'}, scope: 'session'},
             {text: 'rm -rf /', prefix: ['rm'], allowed_by: null},
             {text: 'echo $(id) > /etc/x', prefix: ['echo'], allowed_by: null, opaque: 'redirection to a file'}],
    current_stage: 1, judge_escalated: true, reviewer_reason: '<b>looks fine</b>',
    endorsements: [{agent: 'agt_programmer', note: 'ok \u202e', at: '2026-01-01T00:00:01Z'}],
    arguments: {}})));
  const box = document.createElement('div');
  box.append(...view.page(shell));
  const moved = Object.assign({}, shell, {revision: 4, current_stage: 2, approver: {kind: 'person', id: 'u-1'}});
  const escalated = Object.assign({}, base, {revision: 4, approver: {kind: 'person', id: 'u-1'}});
  const fromAgent = Object.assign({}, base, {approver: {kind: 'agent', id: 'agt_programmer'}});
  const marks = (s) => { const d = document.createElement('div'); d.append(text.visible(s)); return d.querySelectorAll('mark').length; };
  const args = document.createElement('div');
  args.append(text.jsonView(json.parseNodes('{"b": 1, "2": [true, null, 1.0], "": {}}')));
  return {
    current: box.querySelector('.stage.current')?.textContent ?? '',
    stages: box.querySelector('.stages')?.textContent ?? '',
    hints: box.querySelector('.hints')?.textContent ?? '',
    bold: box.querySelectorAll('b').length,
    endorsements: box.querySelector('.endorsements')?.textContent ?? '',
    countdown: box.querySelector('[data-deadline]')?.textContent ?? '',
    stageMoved: view.changes(shell, moved),
    escalatedFrom: view.changes(fromAgent, escalated),
    onceProtected: view.onlyOnce({subject: {kind: 'shell', protected_write: true}}),
    onceOther: view.onlyOnce({subject: {kind: 'browser'}}),
    onceTool: view.onlyOnce({subject: {kind: 'tool'}}),
    marksRussian: marks('привет, мир'), marksMixed: marks('pаypal'), marksMostly: marks('send to раураl now'),
    marksFullwidth: marks('ｐａｙｐａｌ.com'), marksCafe: marks('café au lait'), marksWholeScript: marks('pay раураӏ.com'),
    escapes: text.visible('a\u2066b\u{E0041}c\nd').textContent,
    args: args.textContent,
    // Last: names and times, and whose answer the server would take.
    names: (() => {
      view.setPeople([{id: 'u-1', name: 'Ada Lovelace'}, {id: 'u-2'}, {id: 'u-3', name: '<b>Alan</b>'}]);
      const out = [view.who({kind: 'person', id: 'u-1'}), view.who({kind: 'person', id: 'u-2'}), view.who({kind: 'group', id: 'finance'}),
        view.who({kind: 'person', id: 'u-3'})].join(' | ');
      view.setPeople([]);
      return out;
    })(),
    times: [view.relative(new Date(Date.now() + 12 * 60e3 + 500).toISOString()), view.relative(new Date(Date.now() - 2 * 60e3).toISOString()),
      view.relative(new Date(Date.now() - 3 * 3600e3).toISOString()), view.relative(new Date(Date.now() - 5e3).toISOString()),
      view.relative('2026-12-03T17:08:24.999396972Z', Date.parse('2026-12-03T17:10:25Z'))].join(' | '),
    exact: view.exact('2026-12-03T17:08:24.999396972Z'),
    notYours: [view.notYours(Object.assign({}, base, {approver: {kind: 'person', id: 'u-2'}}), {kind: 'person', id: 'u-1'}),
      view.notYours(fromAgent, {kind: 'person', id: 'u-1'}),
      view.notYours(base, {kind: 'person', id: 'u-1'}) || 'mine',
      view.notYours(fromAgent, {kind: 'service', id: 'ops'}) || 'left to the server',
      view.notYours(Object.assign({}, base, {approver: {kind: 'group', id: 'finance'}, required_approvals: 2, approvals: []}), {kind: 'person', id: 'u-1'}) || 'mine',
      view.notYours(Object.assign({}, base, {approver: {kind: 'group', id: 'finance'}, required_approvals: 2,
        approvals: [{by: {kind: 'person', id: 'u-1'}, at: '2026-01-01T00:00:00Z'}]}), {kind: 'person', id: 'u-1'})].join(' | '),
  };
})()`

// TestInboxViewsInBrowser: shell stages with the current one marked,
// hints marked as hints, endorsements, what changed on a stage move and an
// escalation, scope limits, look-alikes only where they deceive, escapes,
// and arguments in their stored order.
func TestInboxViewsInBrowser(t *testing.T) {
	b := openBrowser(t)
	srv := servertest.Start(t)
	b.do(chromedp.Navigate(srv.URL + "/"))
	b.wait("the page", `document.getElementById('signin') !== null`)
	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[map[string]any](viewsScript, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	contains := map[string][]string{
		"current":       {"rm -rf /", "current"},
		"stages":        {"ls -la", "allowed by grant grt_1 (session)", "opaque: redirection to a file"},
		"hints":         {"Hints (not decisions)", "Judge", "<b>looks fine</b>"},
		"endorsements":  {"agt_programmer", `ok \u202E`},
		"countdown":     {"expires in 1m "},
		"stageMoved":    {"Stage 2 was allowed; stage 3 is current now.", "Revision 3 → 4."},
		"escalatedFrom": {"It was escalated to person u-1 (was waiting on agent agt_programmer).", "Revision 3 → 4."},
		"escapes":       {`a\u2066b\u{E0041}c` + "\nd"},
		"args":          {"{\n  \"b\": 1,\n  \"2\": [\n    true,\n    null,\n    1.0\n  ],\n  \"\": {}\n}"},
	}
	for key, wants := range contains {
		s, _ := got[key].(string)
		for _, w := range wants {
			if !strings.Contains(s, w) {
				t.Errorf("%s = %q, want it to contain %q", key, s, w)
			}
		}
	}
	for key, want := range map[string]any{
		"names": "Ada Lovelace (u-1) | person u-2 | group finance | <b>Alan</b> (u-3)",
		"times": "in 12 min | 2 min ago | 3 h ago | just now | 2 min ago",
		"notYours": "It waits on person u-2, not on you: your answer would be refused. | It waits on agent agt_programmer, not on you: your answer would be refused." +
			" | mine | left to the server | mine | You have allowed it (1 of 2 approved); it waits for the others of group finance.",
		"bold": 0.0, "onceProtected": true, "onceOther": true, "onceTool": false,
		"marksRussian": 0.0, "marksMixed": 1.0, "marksMostly": 5.0, "marksFullwidth": 6.0, "marksCafe": 0.0, "marksWholeScript": 6.0,
	} {
		if got[key] != want {
			t.Errorf("%s = %v, want %v", key, got[key], want)
		}
	}
	if e, _ := got["exact"].(string); !strings.Contains(e, "2026") || !strings.Contains(e, "24") || strings.Contains(e, "Invalid") || strings.Contains(e, "T17") {
		t.Errorf("exact time of a nanosecond RFC 3339 = %q, want a local date and time to the second", e)
	}
	b.checkConsole()
}

// vectorsScript runs text.js's visible on each case of package display's
// vectors (the file is put in for %s) and returns what the page shows: the text,
// the text in JSON, and the characters marked as look-alikes.
const vectorsScript = `(async () => {
  const text = await import('/inbox/text.js');
  const shown = (s, json) => { const d = document.createElement('div'); d.append(text.visible(s, null, json)); return d; };
  return (%s).map((v) => {
    const d = shown(v.in, false);
    return {in: v.in, escaped: d.textContent, json_escaped: shown(v.in, true).textContent,
      marked: [...d.querySelectorAll('mark.lookalike')].map((m) => m.textContent).join('')};
  });
})()`

// TestDisplayVectorsInBrowser: the inbox shows every case of package
// display's vectors as the server's surfaces do: the same escapes, and
// the same look-alike words flagged (an all-Cyrillic раураӏ.com included).
func TestDisplayVectorsInBrowser(t *testing.T) {
	raw, err := os.ReadFile("../../display/testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []map[string]string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	b := openBrowser(t)
	srv := servertest.Start(t)
	b.do(chromedp.Navigate(srv.URL + "/"))
	b.wait("the page", `document.getElementById('signin') !== null`)
	got, err := chromedp.Run(b.ctx, chromedp.Evaluate[[]map[string]string](fmt.Sprintf(vectorsScript, raw), chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d cases shown, want %d", len(got), len(want))
	}
	for i, w := range want {
		for _, k := range []string{"escaped", "json_escaped", "marked"} {
			if got[i][k] != w[k] {
				t.Errorf("%q: %s = %q, want %q", w["in"], k, got[i][k], w[k])
			}
		}
	}
	b.checkConsole()
}
