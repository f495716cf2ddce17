// Batch answers (SPEC §10 "Batch"): several pending requests of one
// capability whose arguments have the same keys, picked in the list, seen
// side by side (one row per request, one column per argument key) and
// answered once. Each answer is its own POST /v1/requests/{id} with the
// revision shown in the table; the result says, per request, whether it
// applied and why not.

import { call, problemText } from './api.js';
import { el, visible } from './text.js';
import { entries, firstLine, countdown, exact, who, quorum, terminal, onlyOnce, group, currentStage, notYours } from './view.js';
import { encodeNodes } from './json.js';

const $ = (id) => document.getElementById(id);

// Values longer than this are clipped in the table (each request's own
// page shows them whole).
const CELL = 120;

// keysOf is the set of r's top-level argument keys, as one comparable
// string, and the keys in the agent's order.
function keysOf(r) {
  const keys = entries(r).map(([k]) => k);
  return { set: JSON.stringify([...keys].sort()), keys };
}

const capabilityOf = (r) => r.capability.action + ':' + r.capability.target;

function keyList(keys) {
  return keys.length ? keys.map((k) => JSON.stringify(k)).join(', ') : 'none';
}

// misfit says why r cannot join the picked requests (you the person
// signed in), or '' when it can.
export function misfit(picked, r, you) {
  if (!r) return 'That request is no longer in the list.';
  if (terminal(r)) return r.id + ' is ' + r.status + ': only pending requests are answered together.';
  const mine = notYours(r, you);
  if (mine) return 'Not added: ' + r.id + ': ' + mine;
  if (!picked.length) return '';
  const first = picked[0];
  if (capabilityOf(r) !== capabilityOf(first)) {
    return 'Not added: ' + r.id + ' is ' + capabilityOf(r) + ', and the picked requests are ' + capabilityOf(first) +
      '. A batch answers requests of one capability.';
  }
  const a = keysOf(first);
  const b = keysOf(r);
  if (a.set !== b.set) {
    return 'Not added: the arguments of ' + r.id + ' have the keys ' + keyList(b.keys) + ', and those of the picked requests ' +
      keyList(a.keys) + '. A batch answers requests whose arguments have the same keys.';
  }
  return '';
}

// cell shows one argument's value, clipped.
function cell(node) {
  if (!node) return el('td', { class: 'muted' }, '—');
  const text = node.t === 'obj' || node.t === 'arr' ? encodeNodes(node) : node.v;
  const chars = Array.from(text);
  const clip = chars.length > CELL;
  return el('td', { class: node.t === 'obj' || node.t === 'arr' ? 'nested' : node.t === 'str' ? 'str' : 'lit' },
    visible(clip ? chars.slice(0, CELL).join('') : text), clip ? el('span', { class: 'clipped' }, '… (' + chars.length + ' characters)') : null);
}

function radio(name, value, checked, disabled, label) {
  return el('label', { class: 'choice' }, el('input', { type: 'radio', name, value, id: name + '-' + value, checked, disabled }), ' ' + label);
}

// outcome says what an applied answer did to now.
function outcome(shown, now, decision) {
  if (terminal(now)) return 'applied: the request is ' + now.status + '.';
  if (decision === 'allow' && group(now)) return 'applied: ' + quorum(now) + '; it waits for the others of ' + who(now.approver) + '.';
  if (decision === 'allow' && Array.isArray(now.stages) && now.stages.length) {
    return 'applied: stage ' + (currentStage(shown) + 1) + ' allowed; stage ' + (currentStage(now) + 1) + ' waits for an answer.';
  }
  return 'applied: now revision ' + now.revision + ', waiting on ' + who(now.approver) + '.';
}

class Batch {
  constructor() {
    this.picked = []; // the records as they were when picked
    this.hooks = null;
  }

  init(hooks) {
    this.hooks = hooks;
    $('batch-open').addEventListener('click', () => this.open());
    $('batch-clear').addEventListener('click', () => { this.clear(); this.hooks.refresh(); });
  }

  has(id) { return this.picked.some((r) => r.id === id); }

  clear() {
    this.picked = [];
    $('batch-error').textContent = '';
    this.render();
  }

  // toggle picks r (or lets it go); a request that does not fit is
  // refused with the reason, and its box unticked.
  toggle(r, box) {
    $('batch-error').textContent = '';
    if (r && this.has(r.id)) {
      this.picked = this.picked.filter((x) => x.id !== r.id);
    } else {
      const why = misfit(this.picked, r, this.hooks.you());
      if (why) {
        $('batch-error').textContent = why;
        if (box) box.checked = false;
        this.render();
        return;
      }
      this.picked.push(r);
    }
    if (box) box.checked = this.has(r.id);
    this.render();
  }

  render() {
    const bar = $('batch-bar');
    const n = this.picked.length;
    bar.hidden = n === 0 && !$('batch-error').textContent;
    $('batch-count').textContent = n ? n + ' picked (' + capabilityOf(this.picked[0]) + ')' : '';
    $('batch-open').hidden = n < 1;
    $('batch-open').textContent = n === 1 ? 'Answer it…' : 'Answer the ' + n + ' together…';
    $('batch-clear').hidden = n < 1;
    for (const li of document.querySelectorAll('#list li[data-id]')) {
      const box = li.querySelector('input.pick');
      if (box) box.checked = this.has(li.dataset.id);
    }
  }

  // open shows the picked requests side by side, with one answer form.
  open() {
    if (!this.picked.length) return;
    $('batch-error').textContent = '';
    this.hooks.shown();
    const shown = this.picked.slice();
    const keys = keysOf(shown[0]).keys;
    const once = shown.some(onlyOnce);
    const agents = new Set(shown.map((r) => r.agent)).size > 1; // an agent column only when they differ
    const head = el('tr', {}, el('th', { scope: 'col' }, 'Request'), agents ? el('th', { scope: 'col' }, 'Agent') : null,
      el('th', { scope: 'col' }, 'Revision'), ...keys.map((k) => el('th', { scope: 'col', class: 'key' }, visible(k))),
      el('th', { scope: 'col' }, 'Deadline'));
    // data-label names each cell's column where a phone shows a row as a
    // card (inbox.css); it is an attribute, shown as text. The cell's
    // content is one box beside it.
    const labelled = (label, td) => {
      td.setAttribute('data-label', label);
      td.append(el('div', { class: 'cell' }, ...td.childNodes));
      return td;
    };
    const rows = shown.map((r) => {
      const args = new Map(entries(r));
      const line = firstLine(r.reason, 60);
      return el('tr', { 'data-id': r.id },
        labelled('Request', el('td', { class: 'request' }, el('a', { href: '/inbox/' + r.id }, line ? visible(line) : r.id),
          line ? el('span', { class: 'id' }, r.id) : null, el('span', { class: 'outcome', 'data-outcome': '', role: 'status' }))),
        agents ? labelled('Agent', el('td', {}, visible(r.agent))) : null,
        labelled('Revision', el('td', { class: 'num' }, String(r.revision))),
        ...keys.map((k) => labelled(k, cell(args.get(k)))),
        labelled('Deadline', el('td', {}, el('span', { class: 'countdown', 'data-deadline': r.deadline_at, title: 'Deadline: ' + exact(r.deadline_at) }, countdown(r.deadline_at)))));
    });
    const form = el('form', { id: 'batch-form', class: 'answer' },
      el('h3', {}, 'One answer for all ' + shown.length),
      el('fieldset', {}, el('legend', {}, 'Decision'), radio('batch-decision', 'allow', true, false, 'Allow'),
        radio('batch-decision', 'deny', false, false, 'Deny')),
      el('fieldset', {}, el('legend', {}, 'Scope'), radio('batch-scope', 'once', true, false, 'Once'),
        radio('batch-scope', 'session', false, once, 'This session'), radio('batch-scope', 'lifetime', false, once, 'Lifetime'),
        once ? el('p', { class: 'muted' }, 'One of these may only be answered for its one call.') : null),
      el('label', { for: 'batch-reason' }, 'Reason (kept as each decision\'s note)'),
      el('textarea', { id: 'batch-reason', rows: '2', maxlength: '2000' }),
      el('div', { class: 'buttons' }, el('button', { type: 'submit', id: 'batch-submit' }, 'Answer all ' + shown.length),
        this.button('Cancel', () => this.close())));
    form.addEventListener('submit', (ev) => { ev.preventDefault(); this.send(shown, form); });
    const d = $('detail');
    delete d.dataset.id;
    d.dataset.view = 'batch';
    d.replaceChildren(el('h2', { class: 'title' }, 'Answer ' + shown.length + ' requests together'),
      el('p', { class: 'muted' }, 'All ', visible(capabilityOf(shown[0])), agents ? '' : ', all from ', agents ? '' : visible(shown[0].agent),
        ', one row each. Each answer is sent on its own, with ' +
        'the revision shown here: a request that changed since is not answered, and its row says why.'),
      el('p', { id: 'batch-result', class: 'result', role: 'status', hidden: true }),
      el('div', { class: 'batch-scroll' }, el('table', { id: 'batch-table', class: 'report batch' }, el('thead', {}, head), el('tbody', {}, rows))),
      form);
    $('batch-decision-allow').focus();
  }

  button(label, fn) {
    const b = el('button', { type: 'button' }, label);
    b.addEventListener('click', fn);
    return b;
  }

  close() {
    const d = $('detail');
    delete d.dataset.view;
    d.replaceChildren(el('p', { class: 'muted' }, 'Select a request', this.hooks.hint('j/k'), '.'));
  }

  // send answers each shown request with its own compare-and-set.
  async send(shown, form) {
    const pick = (name) => form.querySelector('input[name="' + name + '"]:checked').value;
    const decision = pick('batch-decision');
    const scope = pick('batch-scope');
    const reason = $('batch-reason').value;
    $('batch-submit').disabled = true;
    const results = await Promise.all(shown.map(async (r) => {
      const body = { expected: r.revision, decision, scope };
      if (reason) body.reason = reason;
      const got = await call('POST', '/v1/requests/' + encodeURIComponent(r.id), body);
      return { r, got };
    }));
    if (results.some(({ got }) => got.status === 401)) { this.hooks.signOut('The server no longer accepts this token.'); return; }
    let applied = 0;
    for (const { r, got } of results) {
      const td = document.querySelector('#batch-table tr[data-id="' + r.id + '"] .outcome');
      const ok = got.status === 200;
      if (ok) applied++;
      const text = ok ? outcome(r, got.body, decision)
        : 'not applied (' + got.status + '): ' + problemText(got) + (got.status === 409 ? '. Nothing was changed; open it to see it now.' : '. Nothing was changed.');
      td.dataset.outcome = ok ? 'applied' : 'refused';
      td.className = 'outcome ' + (ok ? 'done' : 'refused');
      td.closest('tr').dataset.outcome = td.dataset.outcome;
      td.textContent = text;
    }
    const refused = results.length - applied;
    const box = $('batch-result');
    box.hidden = false;
    box.className = 'result ' + (refused ? 'conflict' : 'done');
    box.textContent = (decision === 'allow' ? 'Allowed' : 'Denied') + ' (scope ' + scope + '): ' + applied + ' of ' + results.length + ' applied' +
      (refused ? '; ' + refused + ' not: each row says why.' : '.');
    box.scrollIntoView({ block: 'nearest' });
    this.picked = this.picked.filter((p) => !results.some(({ r }) => r.id === p.id));
    form.querySelectorAll('input, textarea, button[type=submit]').forEach((e) => { e.disabled = true; });
    this.render();
    this.hooks.refresh();
  }
}

export const batch = new Batch();
