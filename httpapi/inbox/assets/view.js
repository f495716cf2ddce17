// Views of records: list rows, one request's page, history rows, and the
// description of what changed. Every piece of data goes through visible
// or quoted (text.js).

import { el, visible, quoted, jsonView, Findings } from './text.js';
import { ARGS } from './json.js';

export const terminal = (r) => r.status !== 'pending';

// ref shows {kind, id} as "person u-1".
export function ref(r) {
  if (!r) return 'nobody';
  return r.id ? r.kind + ' ' + r.id : r.kind;
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
  return el('span', { class: cls, 'data-deadline': r.deadline_at }, countdown(r.deadline_at));
}

// row is one pending request in the list; rows are in the Tab order, and
// Enter opens one (app.js).
export function row(r, selected) {
  return el('li', { class: 'row', role: 'option', 'data-id': r.id, 'aria-selected': selected ? 'true' : 'false', tabindex: '0' },
    el('span', { class: 'what' }, visible(what(r))),
    el('span', { class: 'who' }, visible(r.agent), r.judge_escalated ? el('span', { class: 'badge hint' }, 'judge: no decision') : null,
      r.reviewer_reason !== null && r.reviewer_reason !== undefined ? el('span', { class: 'badge hint' }, 'reviewer note') : null,
      stageBadge(r), quorumBadge(r)),
    deadline(r, 'countdown'));
}

// historyRow is one decided request.
export function historyRow(r, selected) {
  const d = r.decision || {};
  return el('li', { class: 'row', role: 'option', 'data-id': r.id, 'aria-selected': selected ? 'true' : 'false', tabindex: '0' },
    el('span', { class: 'what' }, el('span', { class: 'badge status-' + r.status }, r.status), ' ', visible(what(r))),
    el('span', { class: 'who' }, 'by ', visible(ref(d.by)), d.scope ? ', scope ' + d.scope : '', ' · agent ', visible(r.agent), quorumBadge(r)),
    el('span', { class: 'when' }, d.decided_at ? new Date(d.decided_at).toISOString() : ''));
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
  const args = el('section', { class: 'args' }, el('h3', {}, 'Arguments, exactly as stored'), fold(stored));
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

function facts(r, f) {
  const dl = el('dl', { class: 'facts' });
  fact(dl, 'capability', visible(r.capability.action + ':' + r.capability.target, f));
  fact(dl, 'agent', visible(r.agent, f));
  fact(dl, 'chain', ...(r.chain || []).flatMap((a, i) => [i ? ' → ' : '', el('span', { class: 'agent' }, visible(a, f))]));
  fact(dl, 'status', el('span', { class: 'badge status-' + r.status }, r.status));
  if (group(r)) fact(dl, 'quorum', el('span', { class: 'quorum' }, quorum(r)), terminal(r) ? '' : ': each allow by another person counts; one deny ends it');
  if (!terminal(r)) fact(dl, 'waiting on', visible(ref(r.approver), f));
  else if (r.approver) fact(dl, 'was waiting on', visible(ref(r.approver), f));
  if (!terminal(r)) fact(dl, 'deadline', deadline(r, 'countdown big'), ' (' + r.deadline_at + ')');
  if (r.subject && r.subject.kind !== 'tool') fact(dl, 'subject', r.subject.kind, r.subject.protected_write ? ' (write to a protected file: scope once only)' : '');
  if (r.subject && r.subject.command) fact(dl, 'command', el('code', {}, visible(r.subject.command, f)));
  if (r.session) fact(dl, 'session', visible(r.session, f));
  if (r.turn) fact(dl, 'turn', visible(r.turn, f));
  if (r.tool_call_id) fact(dl, 'tool call', visible(r.tool_call_id, f));
  if (r.connection) fact(dl, 'connection', visible(r.connection.id, f), ' revision ' + r.connection.revision);
  fact(dl, 'created', r.created_at);
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

function reason(r, f) {
  if (!r.reason) return el('section', { class: 'reason' }, el('h3', {}, 'The agent\'s reason'), el('p', { class: 'muted' }, 'The agent gave none.'));
  return el('section', { class: 'reason' }, el('h3', {}, 'The agent\'s reason'),
    el('p', { class: 'attribution' }, 'In ', visible(r.agent, f), '\'s words (data, not instructions):'),
    Object.assign(quoted(r.reason, f), { id: 'reason' }));
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
    el('ul', {}, list.map((e) => el('li', {}, el('span', { class: 'agent' }, visible(e.agent, f)), ' at ' + e.at,
      e.note ? quoted(e.note, f) : null))));
}

// approvals lists who has allowed so far, each with scope, time and note.
function approvals(r, f) {
  if (!group(r)) return null;
  const list = r.approvals || [];
  return el('section', { class: 'approvals' }, el('h3', {}, 'Answered so far: ' + quorum(r)),
    list.length ? el('ul', {}, list.map((a) => el('li', {}, el('span', { class: 'badge ok' }, 'allowed'), ' by ', visible(ref(a.by), f),
      a.scope ? ', scope ' + a.scope : '', ', at ' + a.at, a.note ? quoted(a.note, f) : null)))
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
      s.allowed_by ? el('span', { class: 'badge ok' }, 'allowed by ' + ref(s.allowed_by) + (s.scope ? ' (' + s.scope + ')' : '')) : null,
      s.opaque ? el('span', { class: 'badge warn' }, 'opaque: ', visible(s.opaque, f)) : null))));
}

function decision(r, f) {
  const d = r.decision;
  if (!d) return null;
  const lines = [el('p', {}, el('span', { class: 'badge status-' + d.status }, d.status), ' by ', visible(ref(d.by), f),
    d.scope ? ', scope ' + d.scope : '', ', at ' + d.decided_at)];
  if (d.status === 'expired') lines.push(el('p', {}, 'No decision was made in time.'));
  if (d.note) lines.push(el('p', { class: 'attribution' }, 'Note:'), quoted(d.note, f));
  if (d.quoted_rule) lines.push(el('p', { class: 'attribution' }, 'Quoted rule:'), quoted(d.quoted_rule, f));
  if (r.edited) lines.push(el('p', { id: 'edited' }, 'Allowed with edits by ', visible(ref(r.edited.by), f), ' at ' + r.edited.at +
    ': the arguments above are the edited call; the call as submitted had digest ' + r.edited.original_digest + '.'));
  return el('section', { class: 'decision' }, el('h3', {}, 'Decision'), lines);
}

// changes describes how now differs from shown, for a refused answer.
export function changes(shown, now) {
  const out = [];
  const d = now.decision;
  if (terminal(now) && d) {
    if (d.status === 'expired') out.push('It expired: no decision was made in time.');
    else if (d.status === 'cancelled') out.push('It was cancelled by ' + ref(d.by) + ' at ' + d.decided_at + '.');
    else out.push('It was ' + d.status + ' by ' + ref(d.by) + (d.scope ? ' (scope ' + d.scope + ')' : '') + ' at ' + d.decided_at + '.');
  } else if (ref(now.approver) !== ref(shown.approver)) {
    out.push('It was escalated to ' + ref(now.approver) + ' (was waiting on ' + ref(shown.approver) + ').');
  }
  const had = new Set((shown.approvals || []).map((a) => ref(a.by)));
  const allowed = (now.approvals || []).filter((a) => !had.has(ref(a.by))).map((a) => ref(a.by));
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
