// The inbox is a client of the public HTTP API only (SPEC §5). The token
// lives in this tab's session storage and travels only in the
// Authorization header.

import { decode } from './json.js';

const KEY = 'countersign.token';

export const token = {
  get: () => sessionStorage.getItem(KEY) || '',
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

// Without a pasted token, a sign-in session (SPEC §13) rides in its
// HttpOnly cookie; every answer made with it carries its CSRF token, read
// from GET /v1/session.
export const session = { csrf: '' };

function auth(method) {
  if (token.get()) return { Authorization: 'Bearer ' + token.get() };
  return method === 'GET' ? {} : { 'X-CSRF-Token': session.csrf };
}

// loadSession reads the cookie's session: its body, or null.
export async function loadSession() {
  const r = await call('GET', '/v1/session');
  session.csrf = r.status === 200 ? r.body.csrf_token : '';
  return r.status === 200 ? r.body : null;
}

// call sends one API request and returns {status, body}: body is the
// decoded JSON (records keep their stored arguments, see json.js), or
// null. A string body is sent as it is (JSON already written). Network
// failures come back as status 0.
export async function call(method, path, body) {
  const headers = auth(method);
  const init = { method, headers, cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    return { status: 0, body: { detail: 'The server could not be reached.' } };
  }
  const text = await resp.text();
  let parsed = null;
  try { parsed = text ? decode(text) : null; } catch (e) { parsed = null; }
  return { status: resp.status, body: parsed };
}

// problemText is what a refused call says to a person.
export function problemText(r) {
  if (r.body && typeof r.body.detail === 'string') return r.body.detail;
  return 'The server answered ' + r.status + '.';
}

// list pages through GET /v1/requests with query q (at most pages pages).
export async function list(q, pages = 10) {
  let items = [];
  let cursor = '';
  for (let n = 0; n < pages; n++) {
    const r = await call('GET', '/v1/requests?' + q + (cursor ? '&cursor=' + encodeURIComponent(cursor) : ''));
    if (r.status !== 200) return { status: r.status, error: problemText(r), items };
    items = items.concat(r.body.items || []);
    cursor = r.body.next_cursor;
    if (!cursor) break;
  }
  return { status: 200, items };
}

// follow reads GET /v1/events as Server-Sent Events through fetch (an
// EventSource cannot send the Authorization header), resuming with
// Last-Event-ID after a drop. onOpen runs each time the stream is open;
// onEvent gets {id, type, data}; onState gets 'live', 'reconnecting' or
// 'refused'. It returns when signal aborts or the token is refused.
export async function follow({ signal, onOpen, onEvent, onState }) {
  let last = '';
  let delay = 500;
  while (!signal.aborted) {
    try {
      const headers = { ...auth('GET'), Accept: 'text/event-stream' };
      if (last) headers['Last-Event-ID'] = last;
      const resp = await fetch('/v1/events', { headers, signal, cache: 'no-store' });
      if (resp.status === 401 || resp.status === 403) { onState('refused'); return; }
      if (!resp.ok || !resp.body) throw new Error('events: ' + resp.status);
      onState('live');
      delay = 500;
      await onOpen();
      await readEvents(resp.body, (ev) => { if (ev.id) last = ev.id; onEvent(ev); });
    } catch (e) {
      if (signal.aborted) return;
    }
    onState('reconnecting');
    await new Promise((done) => setTimeout(done, delay));
    delay = Math.min(delay * 2, 15000);
  }
}

// readEvents parses an event stream (the WHATWG format): fields until a
// blank line make one event; comment lines are skipped.
async function readEvents(body, fn) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  let ev = { id: '', type: 'message', data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    const lines = buf.split(/\r\n|\r|\n/);
    buf = lines.pop();
    for (const line of lines) {
      if (line === '') {
        if (ev.data.length) fn({ id: ev.id, type: ev.type, data: ev.data.join('\n') });
        ev = { id: ev.id, type: 'message', data: [] };
        continue;
      }
      if (line.startsWith(':')) continue;
      const at = line.indexOf(':');
      const field = at < 0 ? line : line.slice(0, at);
      let val = at < 0 ? '' : line.slice(at + 1);
      if (val.startsWith(' ')) val = val.slice(1);
      if (field === 'data') ev.data.push(val);
      else if (field === 'event') ev.type = val;
      else if (field === 'id') ev.id = val;
    }
  }
}
