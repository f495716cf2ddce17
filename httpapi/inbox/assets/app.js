// The inbox page: sign-in, the live list, one request's page (each at its
// own address, /inbox/<id>), the answer form, history, the admins' policy
// replay (/inbox/policy), and the keyboard.

import { token, session, loadSession, call, list, follow, problemText } from './api.js';
import { el, quoted, visible } from './text.js';
import { ARGS, encodeNodes, argumentsProblem } from './json.js';
import { page, row, historyRow, changes, countdown, terminal, currentStage, onlyOnce, group, quorum, who, setPeople, relative,
  onlyOthersApproved, editable, approvals, notYours } from './view.js';
import { report } from './policy.js';
import { batch } from './batch.js';

const $ = (id) => document.getElementById(id);

const state = {
  view: 'pending', // or 'history', or 'policy'
  admin: null, // whether the token holds the admin scope (GET /v1/config answered 200); null: not known yet
  items: [],
  selected: '',
  shown: null, // the record on the page: its revision is what an answer sends
  stream: null, // AbortController of the event stream
  seq: 0,
  timer: 0,
  you: null, // {kind, id, name?}: who is signed in (GET /v1/people)
};

// hint is a keyboard hint: hidden on touch screens (inbox.css).
const hint = (keys) => el('span', { class: 'kbd' }, ' (' + keys + ')');
const selectHint = () => el('p', { class: 'muted' }, 'Select a request', hint('j/k'), '.');

function showSignin(message) {
  $('signin').hidden = false;
  $('inbox').hidden = true;
  $('policy').hidden = true;
  for (const id of ['tabs', 'live', 'signout', 'tab-policy', 'whoami']) $(id).hidden = true;
  $('signin-error').textContent = message || '';
  $('token').value = '';
  offerProvider();
}

// offerProvider shows "Sign in with <provider>" first when the server has
// one (named by its issuer's host), the token box behind "Use a token";
// without one, the token box is the way in.
async function offerProvider() {
  const r = await call('GET', '/inbox/signin/options');
  const a = $('signin-oidc');
  const oidc = r.status === 200 && r.body && r.body.oidc === true && typeof r.body.issuer === 'string';
  a.hidden = !oidc;
  $('signin-or').hidden = !oidc;
  $('token-box').open = !oidc || $('signin-error').textContent !== '';
  $('token-summary').hidden = !oidc;
  if (oidc) {
    a.replaceChildren('Sign in with ', visible(providerName(r.body.issuer)));
    a.title = 'The identity provider at ' + r.body.issuer;
  }
  if ($('token-box').open) $('token').focus();
}

// providerName is the host of the issuer's URL (the issuer itself when it
// is not one).
function providerName(issuer) {
  try { return new URL(issuer).host || issuer; } catch (e) { return issuer; }
}

// resume enters with the sign-in session's cookie, if there is one.
async function resume() {
  if (await loadSession()) enter(); else showSignin();
}

async function signIn(ev) {
  ev.preventDefault();
  token.set($('token').value.trim());
  const r = await call('GET', '/v1/requests?status=pending&limit=1');
  if (r.status !== 200) {
    token.clear();
    const why = { 401: 'That token was not accepted.', 403: 'That token may not read an inbox (it needs approvals:read).' };
    showSignin(why[r.status] || problemText(r));
    return;
  }
  enter();
}

function enter() {
  $('signin').hidden = true;
  $('inbox').hidden = false;
  for (const id of ['tabs', 'live', 'signout']) $(id).hidden = false;
  loadPeople();
  state.stream = new AbortController();
  follow({ signal: state.stream.signal, onOpen: refresh, onEvent, onState: live });
  const policyAddressed = location.pathname === POLICY;
  checkAdmin();
  if (policyAddressed) { setView('policy'); return; }
  const id = addressed();
  if (id) select(id, true);
}

// loadPeople learns who is signed in and the tenant's names (GET
// /v1/people; a sign-in session's own GET /v1/session names its member
// when that is refused), says it in the header, and names the people on
// the page.
async function loadPeople() {
  const r = await call('GET', '/v1/people');
  let you = null;
  if (r.status === 200 && r.body && r.body.you) {
    setPeople(r.body.items);
    you = r.body.you;
  } else if (!token.get()) {
    const s = await loadSession();
    if (s) you = { kind: 'person', id: s.member, name: s.name };
  }
  state.you = you;
  const box = $('whoami');
  box.hidden = !you;
  if (you) {
    const name = typeof you.name === 'string' && you.name.trim() ? you.name.trim() : '';
    box.replaceChildren(...['Signed in as ', el('strong', { id: 'whoami-name' }, visible(name || (you.kind === 'person' ? you.id : you.kind + ' ' + you.id))),
      name ? el('span', { class: 'id' }, ' (', visible(you.id), ')') : null].filter(Boolean));
    box.title = (token.get() ? 'With a pasted token' : 'With a sign-in session') + ': ' + you.kind + ' ' + you.id;
  }
  renderList();
  if (state.shown && !$('answer') && !$('edit') && state.view !== 'policy') renderDetail();
}

// The address of a request's page is /inbox/<id>; the page served there
// opens it (after sign-in). The admins' policy replay is at /inbox/policy.
const PAGE = '/inbox/';
const POLICY = PAGE + 'policy';

// checkAdmin asks the server whether the token holds the admin scope
// (GET /v1/config is admin only, and reads nothing secret): only then is
// the Policy tab offered. On the policy page (reached by its address), a
// refusal is said on the page.
async function checkAdmin() {
  const r = await call('GET', '/v1/config');
  state.admin = r.status === 200;
  $('tab-policy').hidden = !state.admin;
  if (state.view !== 'policy') return;
  $('policy-form').hidden = !state.admin;
  if (!state.admin) policyRefused(r);
}

// policyRefused says why the policy page cannot run for this token.
function policyRefused(r) {
  $('policy-report').replaceChildren();
  $('policy-error').textContent = r.status === 403
    ? 'Refused (403 Forbidden): only a token with the admin scope may replay a policy, and this one has not. The server said: ' + problemText(r)
    : r.status === 401 ? 'Refused (401): the server no longer accepts this token.' : 'The policy replay is not available: ' + problemText(r);
}

// runPolicy replays the pasted config (POST /v1/policy/replay) and shows
// the report; a refused config shows the server's problem (which line).
async function runPolicy(ev) {
  ev.preventDefault();
  const body = { config: $('policy-config').value, since: $('policy-since').value.trim() || '720h' };
  $('policy-run').disabled = true;
  $('policy-error').textContent = '';
  $('policy-report').replaceChildren(el('p', { class: 'muted' }, 'Replaying…'));
  const r = await call('POST', '/v1/policy/replay', body);
  $('policy-run').disabled = false;
  if (r.status === 200 && r.body) { $('policy-report').replaceChildren(...report(r.body)); return; }
  $('policy-report').replaceChildren();
  if (r.status === 400) {
    // The detail names the field and the line ("config: yaml: line 6: …");
    // the field is added when it does not.
    const field = r.body && typeof r.body.field === 'string' ? r.body.field : '';
    const detail = problemText(r);
    $('policy-error').textContent = 'Not replayed: ' + (field && !detail.startsWith(field + ':') ? field + ': ' : '') + detail;
    return;
  }
  if (r.status === 401 || r.status === 403) { policyRefused(r); return; }
  $('policy-error').textContent = 'Not replayed: ' + problemText(r);
}

// addressed is the request id the address names, or ''.
function addressed() {
  const p = location.pathname;
  return p.startsWith(PAGE) && /^req_[0-9A-Z]{26}$/.test(p.slice(PAGE.length)) ? p.slice(PAGE.length) : '';
}

// address puts the shown request's address in the location bar (moving
// through the inbox adds no history entries).
function address(id) {
  if (location.pathname !== PAGE + id) history.replaceState(null, '', PAGE + id);
}

function signOut(message) {
  if (state.stream) state.stream.abort();
  if (!token.get() && session.csrf) call('DELETE', '/v1/session'); // ends it server-side
  session.csrf = '';
  token.clear();
  Object.assign(state, { items: [], selected: '', shown: null, stream: null, view: 'pending', admin: null, you: null });
  setPeople([]);
  batch.clear();
  for (const [tab, on] of [['tab-pending', true], ['tab-history', false], ['tab-policy', false]]) $(tab).setAttribute('aria-pressed', String(on));
  $('policy-report').replaceChildren();
  $('policy-error').textContent = '';
  $('list').replaceChildren();
  $('detail').replaceChildren(selectHint());
  showSignin(typeof message === 'string' ? message : '');
}

function live(s) {
  if (s === 'refused') { signOut('The server no longer accepts this token.'); return; }
  $('live').textContent = s === 'live' ? 'live' : 'reconnecting…';
  $('live').className = 'live ' + (s === 'live' ? 'on' : 'off');
}

// refresh reloads the list of the current view; the newest call wins.
async function refresh() {
  const seq = ++state.seq;
  const pending = await list('status=pending&limit=200');
  const hist = state.view === 'history' ? await list('status=approved,denied,expired,cancelled&limit=500') : null;
  if (seq !== state.seq) return;
  if (pending.status === 401) { signOut('The server no longer accepts this token.'); return; }
  $('count').textContent = pending.status === 200 ? String(pending.items.length) : '';
  const r = hist || pending;
  $('list-error').textContent = r.status === 200 ? '' : r.error;
  state.items = hist ? hist.items.sort((a, b) => (b.decision?.decided_at || '').localeCompare(a.decision?.decided_at || '')) : pending.items;
  renderList();
}

function scheduleRefresh() {
  clearTimeout(state.timer);
  state.timer = setTimeout(refresh, 50);
}

function renderList() {
  const make = state.view === 'history' ? historyRow : row;
  const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest('#list li[data-id]');
  $('list').replaceChildren(...state.items.map((r) => make(r, r.id === state.selected, batch.has(r.id))));
  batch.render();
  // A live update must not take the keyboard's place away.
  const again = focused && rowOf(focused.dataset.id);
  if (again) again.focus({ preventScroll: true });
  $('empty').hidden = state.items.length > 0;
  $('empty').textContent = state.view === 'history' ? 'Nothing decided yet.' : 'Nothing waiting for you.';
  $('list').dataset.view = state.view;
}

function onEvent(ev) {
  if (!ev.type.startsWith('dev.countersign.request.')) return;
  scheduleRefresh();
  let ce;
  try { ce = JSON.parse(ev.data); } catch (e) { return; }
  const s = state.shown;
  if (s && ce.subject === s.id && ce.data && ce.data.revision > s.revision && !terminal(s)) {
    changed(ce.data);
  }
}

// changed says on the page that the request moved on while shown. When
// only other people's approvals came since (SPEC §12), an answer to the
// revision shown still applies: the page says so and shows the count
// now, keeping an open form as it is.
async function changed(event) {
  const shown = state.shown;
  const got = await call('GET', '/v1/requests/' + encodeURIComponent(shown.id));
  if (state.shown !== shown || !$('changed')) return;
  const now = got.status === 200 ? got.body : event;
  const note = $('changed');
  note.hidden = false;
  if (got.status === 200 && onlyOthersApproved(shown, now)) {
    const had = new Set((shown.approvals || []).map((a) => a.by && a.by.kind + ' ' + a.by.id));
    const others = (now.approvals || []).filter((a) => !had.has(a.by && a.by.kind + ' ' + a.by.id)).map((a) => who(a.by));
    note.className = 'changed fits';
    note.replaceChildren((others.length ? others.join(', ') + ' allowed meanwhile: ' : 'Meanwhile: ') + quorum(now) +
      ' (revision ' + now.revision + '). Your answer still applies: only other people\'s approvals came since the revision you see.');
    for (const q of document.querySelectorAll('#detail .facts .quorum')) q.textContent = quorum(now);
    const list = document.querySelector('#detail .approvals');
    if (list) list.replaceWith(approvals(now));
    now[ARGS] = shown[ARGS];
    state.shown = Object.assign(now, { revision: shown.revision });
    return;
  }
  note.className = 'changed';
  note.replaceChildren('This request changed while you were looking (now revision ' + now.revision + ', ' + now.status +
    '). An answer to the revision shown would be refused. ', button('Show the current version', () => select(shown.id, true)));
}

function button(label, fn, attrs) {
  const b = el('button', Object.assign({ type: 'button' }, attrs), label);
  b.addEventListener('click', fn);
  return b;
}

// select shows one request; fresh fetches it again instead of using the
// list's copy.
async function select(id, fresh) {
  state.selected = id;
  address(id);
  for (const li of $('list').children) li.setAttribute('aria-selected', li.dataset.id === id ? 'true' : 'false');
  const li = rowOf(id);
  if (li) li.scrollIntoView({ block: 'nearest' });
  if (li && document.activeElement && document.activeElement.closest && document.activeElement.closest('#list')) li.focus();
  let r = state.items.find((x) => x.id === id);
  if (fresh || !r) {
    const got = await call('GET', '/v1/requests/' + encodeURIComponent(id));
    if (state.selected !== id) return;
    if (got.status !== 200) { missing(id, got); return; }
    r = got.body;
  }
  state.shown = r;
  renderDetail();
}

function rowOf(id) {
  return [...$('list').children].find((x) => x.dataset.id === id);
}

// missing says on the page that a request could not be shown.
function missing(id, got) {
  state.shown = null;
  const why = got.status === 404 ? 'There is no request ' + id + ' that you may see.' : problemText(got);
  $('detail').replaceChildren(el('p', { id: 'detail-error', class: 'error', role: 'alert' }, why));
  delete $('detail').dataset.id;
}

function renderDetail(message) {
  const r = state.shown;
  const d = $('detail');
  delete d.dataset.view;
  d.dataset.id = r.id;
  d.dataset.revision = String(r.revision);
  const why = notYours(r, state.you);
  // (right after an answer, its result says it instead)
  const actions = terminal(r) ? null : why ? (message ? null : el('p', { id: 'not-yours', class: 'muted notyours', role: 'note' }, visible(why))) : el('div', { class: 'actions' },
    button(['Allow…', hint('a')], () => openForm('allow'), { class: 'allow', id: 'open-allow' }),
    button(['Deny…', hint('d')], () => openForm('deny'), { class: 'deny', id: 'open-deny' }),
    editable(r) ? button('Edit and allow…', openEdit, { class: 'allow', id: 'open-edit' }) : null);
  d.replaceChildren(...[el('p', { id: 'changed', class: 'changed', role: 'status', hidden: true }), ...page(r), actions,
    el('div', { id: 'answer-slot' }), el('div', { id: 'answer-result', role: 'status', hidden: true })].filter(Boolean));
  if (message) result(...message);
}

function result(kind, ...content) {
  const box = $('answer-result');
  if (!box) return;
  box.hidden = false;
  box.className = 'result ' + kind;
  box.replaceChildren(...content);
}

function radio(name, value, checked, disabled, label) {
  return el('label', { class: 'choice' }, el('input', { type: 'radio', name, value, id: name + '-' + value, checked, disabled }), ' ' + label);
}

// leaves is which grant a lasting allow of the current stage leaves, as
// the server says it (stage.grant): ": any `git push …`", ": exactly this
// command"; "" on a request without stages.
function leaves(r) {
  const s = Array.isArray(r.stages) ? r.stages[currentStage(r)] : null;
  return s && s.grant ? ': ' + s.grant : '';
}

function openForm(decision) {
  if (!state.shown && state.items.length) { select(state.items[0].id).then(() => openForm(decision)); return; }
  const r = state.shown;
  if (!r || terminal(r) || notYours(r, state.you) || !$('answer-slot')) return;
  const once = onlyOnce(r);
  const stage = Array.isArray(r.stages) && r.stages.length ? ' (stage ' + (currentStage(r) + 1) + ' of ' + r.stages.length + ')' : '';
  const form = el('form', { id: 'answer', class: 'answer', 'data-decision': decision },
    el('h3', {}, 'Answer revision ' + r.revision + stage),
    el('fieldset', {}, el('legend', {}, 'Decision'), radio('decision', 'allow', decision === 'allow', false, 'Allow'),
      radio('decision', 'deny', decision === 'deny', false, 'Deny')),
    el('fieldset', {}, el('legend', {}, 'Scope'), radio('scope', 'once', true, false, 'Once'),
      radio('scope', 'session', false, once, 'This session' + (r.session ? leaves(r) : ' (no session: no grant kept)')),
      radio('scope', 'lifetime', false, once, 'Lifetime' + leaves(r)),
      once ? el('p', { class: 'muted' }, 'This request may only be answered for this one call.') : null),
    el('label', { for: 'answer-reason' }, 'Reason (kept as the decision\'s note)'),
    el('textarea', { id: 'answer-reason', rows: '2', maxlength: '2000' }),
    el('label', { for: 'answer-rule' }, 'Rule to keep for the agent (optional)'),
    el('input', { id: 'answer-rule', type: 'text', maxlength: '2000' }),
    el('div', { class: 'buttons' }, el('button', { type: 'submit', id: 'answer-submit' }, 'Send answer'),
      button(['Cancel', hint('Esc')], closeForm)));
  form.addEventListener('submit', (ev) => { ev.preventDefault(); answer(r, form); });
  $('answer-slot').replaceChildren(form);
  // Focus the chosen decision, not a text field: the key that opened the
  // form must not be typed into the reason.
  $('decision-' + decision).focus();
}

// openEdit opens the "Edit and allow" form (SPEC §5, approve with edits):
// the stored arguments in a JSON editor; the call runs with the edited
// ones instead, once. The page checks them as a submit would before
// anything is sent.
function openEdit() {
  const r = state.shown;
  if (!r || !editable(r) || notYours(r, state.you) || !$('answer-slot')) return;
  const form = el('form', { id: 'edit', class: 'answer' },
    el('h3', {}, 'Edit and allow revision ' + r.revision),
    el('p', { class: 'muted' }, 'The call runs with these arguments instead, this once; no grant is kept.'),
    el('label', { for: 'edit-arguments' }, 'Arguments (JSON)'),
    el('textarea', { id: 'edit-arguments', rows: '10', spellcheck: 'false', class: 'json' }),
    el('p', { id: 'edit-error', class: 'error', role: 'alert' }),
    el('label', { for: 'edit-reason' }, 'Reason (kept as the decision\'s note)'),
    el('textarea', { id: 'edit-reason', rows: '2', maxlength: '2000' }),
    el('div', { class: 'buttons' }, el('button', { type: 'submit', id: 'edit-submit' }, 'Allow with these arguments'),
      button(['Cancel', hint('Esc')], closeForm)));
  form.addEventListener('submit', (ev) => { ev.preventDefault(); editAllow(r); });
  $('answer-slot').replaceChildren(form);
  $('edit-arguments').value = r[ARGS] ? encodeNodes(r[ARGS]) : '{}';
  $('edit-arguments').focus();
}

// editAllow sends the edited arguments as typed (key order and numbers
// kept), once they pass the page's check; otherwise nothing is sent.
async function editAllow(shown) {
  const text = $('edit-arguments').value.trim();
  const problem = argumentsProblem(text);
  $('edit-error').textContent = problem ? 'Not sent: ' + problem + '.' : '';
  if (problem) return;
  const body = { expected: shown.revision, decision: 'allow', scope: 'once' };
  if ($('edit-reason').value) body.reason = $('edit-reason').value;
  const raw = JSON.stringify(body).slice(0, -1) + ',"arguments":' + text + '}';
  $('edit-submit').disabled = true;
  const r = await call('POST', '/v1/requests/' + encodeURIComponent(shown.id), raw);
  if (r.status === 200) { answered(shown, r.body, body); return; }
  $('edit-submit').disabled = false;
  if (r.status === 409) { await conflict(shown, r); return; }
  if (r.status === 401) { signOut('The server no longer accepts this token.'); return; }
  result('error', 'Not answered: ' + problemText(r));
}

function closeForm() {
  if ($('answer-slot')) $('answer-slot').replaceChildren();
}

// answer sends the form's answer with the shown revision as expected.
async function answer(shown, form) {
  const pick = (name) => form.querySelector('input[name="' + name + '"]:checked').value;
  const body = { expected: shown.revision, decision: pick('decision'), scope: pick('scope') };
  if ($('answer-reason').value) body.reason = $('answer-reason').value;
  if ($('answer-rule').value) body.rule = $('answer-rule').value;
  $('answer-submit').disabled = true;
  const r = await call('POST', '/v1/requests/' + encodeURIComponent(shown.id), body);
  if (r.status === 200) { answered(shown, r.body, body); return; }
  $('answer-submit').disabled = false;
  if (r.status === 409 && r.body && r.body.reason === 'protected_write_unwatched') {
    result('conflict', 'Not answered: this is a protected write, answered only while the agent\'s own client watches its session. Nothing was changed.');
    return;
  }
  if (r.status === 409) { await conflict(shown, r); return; }
  if (r.status === 401) { signOut('The server no longer accepts this token.'); return; }
  result('error', 'Not answered: ' + problemText(r));
}

function answered(shown, now, body) {
  const words = terminal(now) ? 'You answered ' + body.decision + ' (scope ' + body.scope + '): the request is ' + now.status + '.'
    : group(now) ? 'You allowed: ' + quorum(now) + '; it waits for the others of ' + who(now.approver) + '.'
      : 'You allowed stage ' + (currentStage(shown) + 1) + '; stage ' + (currentStage(now) + 1) + ' waits for an answer.';
  state.shown = now;
  renderDetail(['done', words]);
  scheduleRefresh();
}

// conflict reads the request again and says what changed since it was
// shown; nothing was changed by the refused answer.
async function conflict(shown, refused) {
  const now = await call('GET', '/v1/requests/' + encodeURIComponent(shown.id));
  if (now.status !== 200) {
    result('conflict', 'Not answered: the request is no longer visible to you. Nothing was changed.');
    return;
  }
  const what = now.body.revision === shown.revision && terminal(now.body) === terminal(shown)
    ? problemText(refused) : changes(shown, now.body);
  const note = now.body.decision && now.body.decision.note ? [el('span', { class: 'attribution' }, ' Their note:'), quoted(now.body.decision.note)] : [];
  // The page shows the current version at once: the buttons of the
  // version that was refused must not stay live.
  state.shown = now.body;
  renderDetail(['conflict', 'Not answered: the request changed since you saw it. ' + what, ...note, ' Nothing was changed by your answer. ',
    'Shown now: revision ' + now.body.revision + ', ' + now.body.status + '.']);
  if (state.selected === shown.id) scheduleRefresh();
}

function setView(view) {
  if (state.view === view && (view !== 'policy' || !$('policy').hidden)) return;
  const was = state.view;
  state.view = view;
  $('tab-pending').setAttribute('aria-pressed', String(view === 'pending'));
  $('tab-history').setAttribute('aria-pressed', String(view === 'history'));
  $('tab-policy').setAttribute('aria-pressed', String(view === 'policy'));
  $('inbox').hidden = view === 'policy';
  $('policy').hidden = view !== 'policy';
  if (view === 'policy') {
    if (location.pathname !== POLICY) history.replaceState(null, '', POLICY);
    $('policy-form').hidden = state.admin === false;
    $('policy-config').focus();
    return;
  }
  if (location.pathname === POLICY) history.replaceState(null, '', '/');
  if (was === view) return;
  state.selected = '';
  state.items = [];
  renderList();
  refresh();
}

function move(step) {
  if (!state.items.length) return;
  const at = state.items.findIndex((r) => r.id === state.selected);
  const next = at < 0 ? (step > 0 ? 0 : state.items.length - 1) : Math.min(Math.max(at + step, 0), state.items.length - 1);
  select(state.items[next].id);
}

const keys = {
  j: () => move(1),
  k: () => move(-1),
  a: () => openForm('allow'),
  d: () => openForm('deny'),
  h: () => setView('history'),
  i: () => setView('pending'),
  p: () => { if (state.admin) setView('policy'); },
  x: () => {
    if (state.view !== 'pending' || !state.selected) return;
    const li = rowOf(state.selected);
    batch.toggle(state.items.find((r) => r.id === state.selected), li && li.querySelector('input.pick'));
  },
  '?': () => { $('help').hidden = !$('help').hidden; },
};

function onKey(ev) {
  if (ev.key === 'Escape') { closeForm(); return; }
  const li = ev.target.closest && ev.target.closest('#list li[data-id]');
  if (li && (ev.key === 'Enter' || ev.key === ' ')) { ev.preventDefault(); open(li.dataset.id); return; }
  if (li && (ev.key === 'ArrowDown' || ev.key === 'ArrowUp')) {
    ev.preventDefault();
    const next = ev.key === 'ArrowDown' ? li.nextElementSibling : li.previousElementSibling;
    if (next) next.focus();
    return;
  }
  if (ev.ctrlKey || ev.metaKey || ev.altKey || ($('inbox').hidden && $('policy').hidden)) return;
  if (ev.target.closest && ev.target.closest('input, textarea, select')) return;
  // On the policy page only the keys that move between pages act.
  const fn = state.view === 'policy' && !['h', 'i', 'p', '?'].includes(ev.key) ? null : keys[ev.key];
  if (!fn) return;
  ev.preventDefault();
  fn();
}

// open shows a request and moves the keyboard to its page.
async function open(id) {
  await select(id);
  $('detail').focus({ preventScroll: true });
}

function tick() {
  for (const e of document.querySelectorAll('[data-deadline]')) e.textContent = countdown(e.dataset.deadline);
  for (const e of document.querySelectorAll('[data-when]')) e.textContent = relative(e.dataset.when);
}

function init() {
  $('signin-form').addEventListener('submit', signIn);
  $('signout').addEventListener('click', () => signOut());
  $('tab-pending').addEventListener('click', () => setView('pending'));
  $('tab-history').addEventListener('click', () => setView('history'));
  $('tab-policy').addEventListener('click', () => setView('policy'));
  $('policy-form').addEventListener('submit', runPolicy);
  $('list').addEventListener('click', (ev) => {
    const li = ev.target.closest('li[data-id]');
    if (!li) return;
    if (ev.target.matches('input.pick')) { batch.toggle(state.items.find((x) => x.id === li.dataset.id), ev.target); return; }
    select(li.dataset.id);
  });
  batch.init({ you: () => state.you, items: () => state.items, shown: () => { state.shown = null; state.selected = ''; }, refresh: scheduleRefresh, signOut, hint });
  document.addEventListener('keydown', onKey);

  setInterval(tick, 1000);
  if (token.get()) enter(); else resume();
}

init();
