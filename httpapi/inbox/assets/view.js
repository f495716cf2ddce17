// Views of records: list rows, one request's page, history rows, and the
// description of what changed. Every piece of data goes through visible
// or quoted (text.js).

import { el, visible, quoted, jsonView, Findings } from './text.js';
import { ARGS, encodeNodes } from './json.js';

export const terminal = (r) => r.status !== 'pending';

// ref shows {kind, id} as "person u-1": the key a reference is compared
// by.
export function ref(r) {
  if (!r) return 'nobody';
  return r.id ? r.kind + ' ' + r.id : r.kind;
}

// People's names (GET /v1/people's items), by member id (SPEC §10
// "People by name"). Names are free text: they reach the page through
// visible, as everything else.
const names = new Map();

// setPeople keeps the names of items ([{id, name?}]).
export function setPeople(items) {
  names.clear();
  for (const p of Array.isArray(items) ? items : []) {
    if (p && typeof p.id === 'string' && typeof p.name === 'string' && p.name.trim()) names.set(p.id, p.name.trim());
  }
}

// who names {kind, id} for people: a person by name with the id beside
// it ("Ada Lovelace (u-1)"), a person without a name as "person u-1",
// anyone else as ref does ("group finance").
export function who(r) {
  if (r && r.kind === 'person' && names.has(r.id)) return names.get(r.id) + ' (' + r.id + ')';
  return ref(r);
}

// parseTime reads an RFC 3339 time (nanoseconds allowed) as milliseconds.
function parseTime(iso) {
  return Date.parse(String(iso).replace(/(\.\d{3})\d+/, '$1'));
}

// exact is iso in the reader's time zone, to the second, with the zone.
export function exact(iso) {
  const t = parseTime(iso);
  return Number.isNaN(t) ? String(iso) : new Date(t).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'long' });
}

// relative is iso from now, for people: "in 12 min", "2 min ago", "3 h
// ago", "yesterday"; a date beyond a month.
export function relative(iso, now = Date.now()) {
  const t = parseTime(iso);
  if (Number.isNaN(t)) return String(iso);
  const s = Math.round((t - now) / 1000);
  const a = Math.abs(s);
  if (a < 45) return s > 0 ? 'in a few seconds' : 'just now';
  let n;
  let unit;
  if (a < 3570) { n = Math.max(1, Math.round(a / 60)); unit = 'min'; } else if (a < 86400 - 1800) { n = Math.round(a / 3600); unit = 'h'; } else if (a < 30 * 86400) { n = Math.round(a / 86400); unit = n === 1 ? 'day' : 'days'; } else return new Date(t).toLocaleDateString(undefined, { dateStyle: 'medium' });
  return s > 0 ? 'in ' + n + ' ' + unit : n + ' ' + unit + ' ago';
}

// when is a time element: relative, the exact local time on hover; the
// page's clock keeps it current (data-when).
export function when(iso) {
  return el('time', { datetime: String(iso), title: exact(iso), 'data-when': String(iso) }, relative(iso));
}

// what is the one line that names a request: the shell command, or the
// capability.
export function what(r) {
  if (r.subject && r.subject.kind === 'shell' && r.subject.command) return r.subject.command;
  return r.capability.action + ':' + r.capability.target;
}

// countdown is the time left until iso, for people.
export function countdown(iso, now = Date.now()) {
  let s = Math.floor((Date.parse(iso) - now) / 1000);
  if (s <= 0) return 'deadline passed: no decision was made in time';
  const d = Math.floor(s / 86400); s %= 86400;
  const h = Math.floor(s / 3600); s %= 3600;
  const m = Math.floor(s / 60); s %= 60;
  const parts = d ? [d + 'd', h + 'h', m + 'm'] : h ? [h + 'h', m + 'm', s + 's'] : m ? [m + 'm', s + 's'] : [s + 's'];
  return 'expires in ' + parts.join(' ');
}

function deadline(r, cls) {
  if (terminal(r)) return null;
  return el('span', { class: cls, 'data-deadline': r.deadline_at, title: 'Deadline: ' + exact(r.deadline_at) }, countdown(r.deadline_at));
}

// A short argument is a string, number, true, false or null whose text
// fits on a row: the rows and the fields table show these first.
const SHORT = 40;

// entries is the stored arguments' top-level [key, node] pairs in the
// agent's order, [] when they are not an object.
export function entries(r) {
  const n = r && r[ARGS];
  return n && n.t === 'obj' ? n.v : [];
}

// scalarText is a scalar node's text (a string without its quotes), or
// null for an object or array.
function scalarText(node) {
  if (node.t === 'obj' || node.t === 'arr') return null;
  return node.v;
}

function isShort(node) {
  const t = scalarText(node);
  return t !== null && Array.from(t).length <= SHORT && !/[\n\r]/.test(t);
}

// shortArguments is up to n of r's short arguments, in the agent's order.
export function shortArguments(r, n = 3) {
  return entries(r).filter(([, v]) => isShort(v)).slice(0, n);
}

// firstLine is the first non-empty line of s, clipped to max characters.
export function firstLine(s, max = 160) {
  const line = String(s || '').split(/\r\n|\r|\n/).find((l) => l.trim()) || '';
  const chars = Array.from(line.trim());
  return chars.length > max ? chars.slice(0, max - 1).join('') + '…' : chars.join('');
}

function chip(k, v) {
  return el('span', { class: 'arg' }, el('span', { class: 'k' }, visible(k)), ' ', el('span', { class: 'v' }, visible(scalarText(v))));
}

// row is one pending request in the list: what, the agent, the reason's
// first line, up to three short arguments and the countdown, with a box
// that picks it for a batch answer (app.js). Rows are in the Tab order,
// and Enter opens one.
export function row(r, selected, picked) {
  const line = firstLine(r.reason);
  const args = shortArguments(r);
  return el('li', { class: 'row', role: 'option', 'data-id': r.id, 'aria-selected': selected ? 'true' : 'false', tabindex: '0' },
    el('input', { type: 'checkbox', class: 'pick', 'aria-label': 'Pick for a batch answer', checked: Boolean(picked), tabindex: '-1' }),
    el('span', { class: 'what' }, visible(what(r))),
    el('span', { class: 'who' }, visible(r.agent), r.judge_escalated ? el('span', { class: 'badge hint' }, 'judge: no decision') : null,
      r.reviewer_reason !== null && r.reviewer_reason !== undefined ? el('span', { class: 'badge hint' }, 'reviewer note') : null,
      stageBadge(r), quorumBadge(r)),
    line ? el('span', { class: 'line' }, visible(line)) : null,
    args.length ? el('span', { class: 'args-short' }, args.map(([k, v]) => chip(k, v))) : null,
    deadline(r, 'countdown'));
}

// historyRow is one decided request.
export function historyRow(r, selected) {
  const d = r.decision || {};
  return el('li', { class: 'row', role: 'option', 'data-id': r.id, 'aria-selected': selected ? 'true' : 'false', tabindex: '0' },
    el('span', { class: 'what' }, el('span', { class: 'badge status-' + r.status }, r.status), ' ', visible(what(r))),
    el('span', { class: 'who' }, 'by ', visible(who(d.by)), d.scope ? ', scope ' + d.scope : '', ' · agent ', visible(r.agent), quorumBadge(r)),
    el('span', { class: 'when' }, d.decided_at ? when(d.decided_at) : ''));
}

// group says whether r waits (or waited) on a group, or needs more than
// one person's allow (SPEC §12).
export const group = (r) => (r.approver && r.approver.kind === 'group') || r.required_approvals > 1;

// quorum is where r's quorum stands: "1 of 2 approved".
export function quorum(r) {
  return (r.approvals || []).length + ' of ' + Math.max(r.required_approvals || 1, 1) + ' approved';
}

function quorumBadge(r) {
  return group(r) ? el('span', { class: 'badge quorum' }, quorum(r)) : null;
}

function stageBadge(r) {
  if (!Array.isArray(r.stages) || r.stages.length === 0) return null;
  return el('span', { class: 'badge' }, 'stage ' + (currentStage(r) + 1) + ' of ' + r.stages.length);
}

// onlyOnce: answers to a request of another subject kind than tool or
// shell, or to a write to a protected file, may only use scope once.
export function onlyOnce(r) {
  const kind = (r.subject && r.subject.kind) || 'tool';
  return (kind !== 'tool' && kind !== 'shell') || Boolean(r.subject && r.subject.protected_write);
}

// currentStage is the record's current_stage, or the first stage not yet
// allowed.
export function currentStage(r) {
  if (Number.isInteger(r.current_stage)) return r.current_stage;
  const i = (r.stages || []).findIndex((s) => !s.allowed_by);
  return i < 0 ? 0 : i;
}

function fact(dl, term, ...value) {
  dl.append(el('dt', {}, term), el('dd', {}, ...value));
}

// page is one request's page: facts, notices, the agent's words, hints,
// endorsements, stages, the arguments as stored, and the decision.
export function page(r) {
  const f = new Findings();
  const stored = r[ARGS] ? jsonView(r[ARGS], f) : el('p', {}, 'none');
  stored.id = 'args';
  const table = fields(r);
  const json = el('details', { id: 'args-json', class: 'args-json', open: !table },
    el('summary', {}, table ? 'The full JSON, exactly as stored' : 'Exactly as stored'), fold(stored));
  const args = el('section', { class: 'args' }, el('h3', {}, 'Arguments'), table, json);
  const parts = [
    el('h2', { class: 'title' }, visible(what(r), f)),
    facts(r, f),
    null, // the notices, once everything is rendered
    reason(r, f),
    hints(r, f),
    endorsements(r, f),
    approvals(r, f),
    stages(r, f),
    args,
    decision(r, f),
  ];
  parts[2] = notices(f);
  return parts.filter(Boolean);
}

// Arguments longer than this many characters or lines are shown folded:
// a box of a few dozen lines that scrolls, and a control that unfolds it,
// so that the answer's buttons stay in sight.
const FOLD_CHARS = 4000;
const FOLD_LINES = 40;

// fold returns the arguments' view, folded with its control when long.
function fold(view) {
  const text = view.textContent;
  const lines = text.split('\n').length;
  if (text.length <= FOLD_CHARS && lines <= FOLD_LINES) return view;
  const size = text.length >= 10240 ? Math.round(text.length / 1024) + ' KB' : text.length + ' characters';
  const label = (open) => open ? 'Fold the arguments' : 'Show all the arguments (' + lines + ' lines, ' + size + ')';
  view.classList.add('folded');
  view.tabIndex = 0; // a scrolling box is reachable from the keyboard
  view.setAttribute('aria-label', 'Arguments (' + lines + ' lines, ' + size + ')');
  const control = el('button', { type: 'button', id: 'args-fold', class: 'fold', 'aria-controls': 'args', 'aria-expanded': 'false' }, label(false));
  control.addEventListener('click', () => {
    const open = view.classList.toggle('folded') === false;
    control.setAttribute('aria-expanded', String(open));
    control.textContent = label(open);
  });
  return [view, control];
}

// Longer values are clipped in the fields table (the full JSON holds
// them whole).
const CLIP = 240;
const CLIP_LINES = 4;

// fields is the arguments as a table, one row per top-level key: the
// short ones first, then the others, each in the agent's order, so that
// a long early field never hides "to" or "subject". null when there is
// no object to show. Its findings are those of the full JSON, shown once.
function fields(r) {
  const all = entries(r);
  if (!all.length) return null;
  const seen = new Findings();
  const rows = [...all.filter(([, v]) => isShort(v)), ...all.filter(([, v]) => !isShort(v))].map(([k, v]) => {
    const scalar = scalarText(v);
    const text = scalar !== null ? scalar : encodeNodes(v);
    let chars = Array.from(text);
    const lines = text.split('\n');
    let clipped = 0;
    if (chars.length > CLIP || lines.length > CLIP_LINES) {
      const keep = Math.min(CLIP, lines.slice(0, CLIP_LINES).join('\n').length);
      clipped = chars.length;
      chars = Array.from(text.slice(0, keep));
    }
    return el('tr', {}, el('th', { scope: 'row' }, visible(k, seen)),
      el('td', { class: scalar === null ? 'nested' : v.t === 'str' ? 'str' : 'lit' }, visible(chars.join(''), seen),
        clipped ? el('span', { class: 'clipped' }, '… (' + clipped + ' characters; the full JSON below)') : null));
  });
  return el('table', { id: 'fields', class: 'fields' }, el('tbody', {}, rows));
}

function facts(r, f) {
  const dl = el('dl', { class: 'facts' });
  fact(dl, 'capability', visible(r.capability.action + ':' + r.capability.target, f));
  fact(dl, 'agent', visible(r.agent, f));
  fact(dl, 'chain', ...(r.chain || []).flatMap((a, i) => [i ? ' → ' : '', el('span', { class: 'agent' }, visible(a, f))]));
  fact(dl, 'status', el('span', { class: 'badge status-' + r.status }, r.status));
  if (group(r)) fact(dl, 'quorum', el('span', { class: 'quorum' }, quorum(r)), terminal(r) ? '' : ': each allow by another person counts; one deny ends it');
  if (!terminal(r)) fact(dl, 'waiting on', visible(who(r.approver), f));
  else if (r.approver) fact(dl, 'was waiting on', visible(who(r.approver), f));
  if (!terminal(r)) fact(dl, 'deadline', deadline(r, 'countdown big'), ' (' + exact(r.deadline_at) + ')');
  if (r.subject && r.subject.kind !== 'tool') fact(dl, 'subject', r.subject.kind, r.subject.protected_write ? ' (write to a protected file: scope once only)' : '');
  if (r.subject && r.subject.command) fact(dl, 'command', el('code', {}, visible(r.subject.command, f)));
  if (r.session) fact(dl, 'session', visible(r.session, f));
  if (r.turn) fact(dl, 'turn', visible(r.turn, f));
  if (r.tool_call_id) fact(dl, 'tool call', visible(r.tool_call_id, f));
  if (r.connection) fact(dl, 'connection', visible(r.connection.id, f), ' revision ' + r.connection.revision);
  fact(dl, 'created', when(r.created_at));
  fact(dl, 'revision', String(r.revision));
  return dl;
}

function notices(f) {
  if (!f.any) return null;
  const box = el('div', { class: 'notices', role: 'note' });
  if (f.hidden.length) {
    box.append(el('p', { class: 'notice hidden-chars' }, f.hidden.length + ' invisible, control or direction character(s) shown as escapes: ',
      [...new Set(f.hidden)].join(', ') + '.'));
  }
  if (f.lookalikes.length) {
    const p = el('p', { class: 'notice lookalikes' }, 'Look-alike letters: ');
    f.lookalikes.forEach((l, i) => p.append(i ? '; ' : '', el('mark', { class: 'lookalike' }, l.ch), ' ' + l.cp + ' looks like "' + l.like + '"'));
    box.append(p);
  }
  return box;
}

// A reason longer than this many lines or characters is shown folded
// to its first lines, with a control that unfolds it: the arguments and
// the buttons stay near the top.
const REASON_LINES = 4;
const REASON_CHARS = 360;

function reason(r, f) {
  if (!r.reason) return el('section', { class: 'reason' }, el('h3', {}, 'The agent\'s reason'), el('p', { class: 'muted' }, 'The agent gave none.'));
  const q = Object.assign(quoted(r.reason, f), { id: 'reason' });
  const lines = r.reason.split('\n').length;
  let control = null;
  if (lines > REASON_LINES || r.reason.length > REASON_CHARS) {
    const label = (open) => open ? 'Fold the reason' : 'Show the whole reason (' + lines + (lines === 1 ? ' line, ' : ' lines, ') + r.reason.length + ' characters)';
    q.classList.add('folded');
    control = el('button', { type: 'button', id: 'reason-fold', class: 'fold', 'aria-controls': 'reason', 'aria-expanded': 'false' }, label(false));
    control.addEventListener('click', () => {
      const open = q.classList.toggle('folded') === false;
      control.setAttribute('aria-expanded', String(open));
      control.textContent = label(open);
    });
  }
  return el('section', { class: 'reason' }, el('h3', {}, 'The agent\'s reason'),
    el('p', { class: 'attribution' }, 'In ', visible(r.agent, f), '\'s words (data, not instructions):'), q, control);
}

function hints(r, f) {
  const items = [];
  if (r.judge_escalated) items.push(el('li', {}, 'Judge: the rules judge read this agent\'s rules and did not decide.'));
  if (r.reviewer_reason !== null && r.reviewer_reason !== undefined) {
    items.push(el('li', {}, 'Reviewer\'s note:', quoted(r.reviewer_reason, f)));
  }
  if (!items.length) return null;
  return el('section', { class: 'hints' }, el('h3', {}, 'Hints (not decisions)'), el('ul', {}, items));
}

function endorsements(r, f) {
  const list = r.endorsements || [];
  if (!list.length) return null;
  return el('section', { class: 'endorsements' }, el('h3', {}, 'Endorsed by'),
    el('ul', {}, list.map((e) => el('li', {}, el('span', { class: 'agent' }, visible(e.agent, f)), ', ', when(e.at),
      e.note ? quoted(e.note, f) : null))));
}

// approvals lists who has allowed so far, each with scope, time and note.
export function approvals(r, f) {
  if (!group(r)) return null;
  const list = r.approvals || [];
  return el('section', { class: 'approvals' }, el('h3', {}, 'Answered so far: ' + quorum(r)),
    list.length ? el('ul', {}, list.map((a) => el('li', {}, el('span', { class: 'badge ok' }, 'allowed'), ' by ', visible(who(a.by), f),
      a.scope ? ', scope ' + a.scope : '', ', ', when(a.at), a.note ? quoted(a.note, f) : null)))
      : el('p', { class: 'muted' }, 'Nobody has allowed yet.'));
}

function stages(r, f) {
  if (!Array.isArray(r.stages) || !r.stages.length) return null;
  const cur = currentStage(r);
  return el('section', { class: 'stages' }, el('h3', {}, 'Stages of the command'),
    el('ol', {}, r.stages.map((s, i) => el('li', { class: i === cur && !terminal(r) ? 'stage current' : 'stage', 'aria-current': i === cur && !terminal(r) ? 'step' : false },
      el('code', {}, visible(s.text, f)),
      i === cur && !terminal(r) ? el('span', { class: 'badge' }, 'current: your answer applies to this stage') : null,
      i === cur && !terminal(r) && s.grant ? el('span', { class: 'badge grant' }, 'a session or lifetime allow leaves a grant of ', visible(s.grant, f)) : null,
      s.allowed_by ? el('span', { class: 'badge ok' }, 'allowed by ', visible(who(s.allowed_by), f), s.scope ? ' (' + s.scope + ')' : '') : null,
      s.opaque ? el('span', { class: 'badge warn' }, 'opaque: ', visible(s.opaque, f)) : null))));
}

function decision(r, f) {
  const d = r.decision;
  if (!d) return null;
  const lines = [el('p', {}, el('span', { class: 'badge status-' + d.status }, d.status), ' by ', visible(who(d.by), f),
    d.scope ? ', scope ' + d.scope : '', ', ', when(d.decided_at))];
  if (d.status === 'expired') lines.push(el('p', {}, 'No decision was made in time.'));
  if (d.note) lines.push(el('p', { class: 'attribution' }, 'Note:'), quoted(d.note, f));
  if (d.quoted_rule) lines.push(el('p', { class: 'attribution' }, 'Quoted rule:'), quoted(d.quoted_rule, f));
  if (r.edited) lines.push(el('p', { id: 'edited' }, 'Allowed with edits by ', visible(who(r.edited.by), f), ', ', when(r.edited.at),
    ': the arguments above are the edited call; the call as submitted had digest ' + r.edited.original_digest + '.'));
  return el('section', { class: 'decision' }, el('h3', {}, 'Decision'), lines);
}

// changes describes how now differs from shown, for a refused answer.
export function changes(shown, now) {
  const out = [];
  const d = now.decision;
  if (terminal(now) && d) {
    if (d.status === 'expired') out.push('It expired: no decision was made in time.');
    else if (d.status === 'cancelled') out.push('It was cancelled by ' + who(d.by) + ' ' + relative(d.decided_at) + ' (' + exact(d.decided_at) + ').');
    else out.push('It was ' + d.status + ' by ' + who(d.by) + (d.scope ? ' (scope ' + d.scope + ')' : '') + ' ' + relative(d.decided_at) + ' (' + exact(d.decided_at) + ').');
  } else if (ref(now.approver) !== ref(shown.approver)) {
    out.push('It was escalated to ' + who(now.approver) + ' (was waiting on ' + who(shown.approver) + ').');
  }
  const had = new Set((shown.approvals || []).map((a) => ref(a.by)));
  const allowed = (now.approvals || []).filter((a) => !had.has(ref(a.by))).map((a) => who(a.by));
  if (allowed.length) out.push(allowed.join(', ') + ' allowed: ' + quorum(now) + '.');
  const more = (now.endorsements || []).length - (shown.endorsements || []).length;
  if (more > 0) out.push(more + ' new endorsement(s).');
  if (Array.isArray(now.stages) && currentStage(now) !== currentStage(shown)) {
    out.push('Stage ' + (currentStage(shown) + 1) + ' was allowed; stage ' + (currentStage(now) + 1) + ' is current now.');
  }
  if (!terminal(now) && Date.parse(now.deadline_at) <= Date.now()) out.push('Its deadline has passed.');
  out.push('Revision ' + shown.revision + ' → ' + now.revision + '.');
  return out.join(' ');
}

// onlyOthersApproved reports whether now differs from shown only by other
// people's approvals (SPEC §12): an answer to the revision shown still
// applies (the server's rule, approvals.AnswerableAt).
export function onlyOthersApproved(shown, now) {
  if (now.revision === shown.revision) return true;
  return !terminal(now) && now.approver && now.approver.kind === 'group' && ref(now.approver) === ref(shown.approver) &&
    now.revision > shown.revision && now.revision - shown.revision <= (now.approvals || []).length;
}

// notYours says why the person you may not answer r, or '' when the
// server would take their answer (events.Tenant.MayAnswer): r waits on
// them, or on a group (theirs, since they see it) they have not yet
// allowed. Anyone but a person (an admin's token) is left to the server.
export function notYours(r, you) {
  if (terminal(r) || !you || you.kind !== 'person') return '';
  const a = r.approver;
  if (!a) return 'It waits on nobody.';
  if (a.kind === 'person' && a.id === you.id) return '';
  if (a.kind === 'group') {
    return (r.approvals || []).some((x) => x.by && x.by.kind === 'person' && x.by.id === you.id)
      ? 'You have allowed it (' + quorum(r) + '); it waits for the others of ' + who(a) + '.' : '';
  }
  return 'It waits on ' + who(a) + ', not on you: your answer would be refused.';
}

// editable reports whether the server would take "Edit and allow" on r:
// not on a request that needs more than one person's allow (SPEC §12; an
// edit binds a call no one else approved).
export const editable = (r) => !terminal(r) && Math.max(r.required_approvals || 1, 1) === 1;
