// The admins' Policy page: a replay of a pasted config over the tenant's
// audit log (POST /v1/policy/replay, SPEC §16), shown as the requests
// whose outcome or approver would change and the summary by capability.
// Every string the server sends goes through visible (text.js): never
// markup.

import { el, visible } from './text.js';
import { when, exact } from './view.js';

// who is {kind, id} as the CLI writes it: "group:finance ×2".
function who(r, n) {
  if (!r) return 'nobody';
  return r.kind + ':' + r.id + (n > 1 ? ' ×' + n : '');
}

// outcomeText is an outcome in a few words, as the CLI's report writes it
// (replay.Outcome.String): "approved by read tools.call:lookup_*",
// "decider person:u-1", "decider group:finance ×2 (backup u-2)".
export function outcomeText(o) {
  if (!o) return '';
  if (o.by === 'judge' || o.by === 'decider') {
    return o.by + ' ' + who(o.approver, o.required_approvals) + (o.backup ? ' (backup ' + o.backup.id + ')' : '');
  }
  if (o.by === 'refused') return 'refused';
  return [o.status, 'by', o.by, o.id].filter(Boolean).join(' ');
}

function cell(tag, cls, ...children) {
  return el(tag, cls ? { class: cls } : {}, ...children);
}

function table(id, caption, heads, rows) {
  return el('table', { id, class: 'report' }, el('caption', {}, caption),
    el('thead', {}, el('tr', {}, heads.map((h) => el('th', { scope: 'col' }, h)))),
    el('tbody', {}, rows));
}

// changeRow is one request that would change: old → new, and why.
function changeRow(c) {
  return el('tr', { 'data-request': c.request },
    cell('td', 'mono', el('a', { href: '/inbox/' + encodeURIComponent(c.request) }, visible(c.request))),
    cell('td', 'muted', when(c.created_at)),
    cell('td', 'mono', visible(c.agent)),
    cell('td', 'mono', visible(c.capability)),
    cell('td', 'move', el('span', { class: 'old' }, visible(outcomeText(c.old))), ' → ', el('span', { class: 'new' }, visible(outcomeText(c.new)))),
    cell('td', 'why', visible(c.reason)));
}

function askedText(as) {
  if (!Array.isArray(as) || !as.length) return '-';
  return as.map((a) => who(a.approver, a.required_approvals) + ' (' + a.requests + ')').join(', ');
}

// summaryRow is one capability's line of the summary.
function summaryRow(l, refused) {
  const n = (k) => cell('td', 'num', String(l[k] || 0));
  return el('tr', { 'data-capability': l.capability }, cell('td', 'mono', visible(l.capability)),
    n('requests'), n('policy'), n('read'), n('grant'), n('rule'), n('judge'), n('decider'), refused ? n('refused') : null,
    cell('td', 'mono', visible(askedText(l.asked))));
}

// report renders a replay's report (replay.Report) as nodes.
export function report(rep) {
  const changes = Array.isArray(rep.changes) ? rep.changes : [];
  const summary = Array.isArray(rep.summary) ? rep.summary : [];
  const refused = summary.some((l) => l.refused > 0);
  const heads = ['Capability', 'Requests', 'Policy', 'Read', 'Grant', 'Rule', 'Judge', 'Decider'].concat(refused ? ['Refused'] : [], ['Asked']);
  return [
    el('p', { id: 'policy-headline', class: 'headline' }, 'Tenant ', visible(rep.tenant), ': ' + rep.requests + ' request' + (rep.requests === 1 ? '' : 's') +
      ' since ', el('time', { datetime: String(rep.since) }, visible(exact(rep.since))), ', ' + changes.length + ' would change. Nothing was written.'),
    changes.length ? table('policy-changes', 'Requests whose outcome or approver would change (old → new)',
      ['Request', 'Created', 'Agent', 'Capability', 'Old → new', 'Why'], changes.map(changeRow))
      : el('p', { id: 'policy-nochange', class: 'muted' }, 'No request would change.'),
    table('policy-summary', 'Summary by capability: what the candidate would decide, and who would be asked', heads,
      summary.map((l) => summaryRow(l, refused))),
  ];
}
