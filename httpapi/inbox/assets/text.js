// Showing data as text. Everything a request carries (arguments, reasons,
// notes, ids) reaches the page through these functions, as text nodes:
// never as markup. Invisible characters become visible escapes and
// look-alike letters are flagged, by the rules of the server's package
// display (Slack, decision links and the CLI show the same), with its
// table (lookalikes.js); display/testdata/vectors.json holds the cases
// both agree on.

import { prototypes } from './lookalikes.js';

// el builds an element. attrs are set with setAttribute (never on*
// handlers); children are nodes or strings, and strings become text nodes.
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v === null || v === undefined) continue;
    e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === 'string' ? document.createTextNode(c) : c);
  }
  return e;
}

// Names of the characters people most need told apart.
const names = {
  0x200b: 'ZERO WIDTH SPACE', 0x200c: 'ZERO WIDTH NON-JOINER', 0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK', 0x200f: 'RIGHT-TO-LEFT MARK', 0x2028: 'LINE SEPARATOR',
  0x2029: 'PARAGRAPH SEPARATOR', 0x202a: 'LEFT-TO-RIGHT EMBEDDING', 0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING', 0x202d: 'LEFT-TO-RIGHT OVERRIDE', 0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER', 0x2066: 'LEFT-TO-RIGHT ISOLATE', 0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE', 0x2069: 'POP DIRECTIONAL ISOLATE', 0xfeff: 'ZERO WIDTH NO-BREAK SPACE',
  0x00ad: 'SOFT HYPHEN', 0x061c: 'ARABIC LETTER MARK', 0x00a0: 'NO-BREAK SPACE',
};

// Characters shown as escapes: controls (Cc), format characters (Cf:
// bidi controls, zero-width joiners and spaces, tags), surrogates,
// private use and unassigned code points, line and paragraph separators,
// every space but U+0020, variation selectors, the combining grapheme
// joiner and the invisible Hangul fillers.
const hidden = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}\u034f\u115f\u1160\u3164\uffa0\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/u;

const jsonEscapes = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

function hex(cp) {
  return cp.toString(16).toUpperCase().padStart(4, '0');
}

// escapeOf returns the visible escape of a hidden character, in
// \u202E style (\u{E0041} above the BMP).
export function escapeOf(ch) {
  const cp = ch.codePointAt(0);
  return cp > 0xffff ? '\\u{' + hex(cp) + '}' : '\\u' + hex(cp);
}

// imitated returns the ASCII text ch's Unicode TR39 skeleton is, for a
// letter, mark or digit outside ASCII that has one, else ''.
export function imitated(ch) {
  return prototypes.get(ch.codePointAt(0)) || '';
}

const wordChar = /[\p{L}\p{M}\p{N}]/u;

// lookalikeSet returns the positions (code point indexes) of s's
// look-alike letters: the characters outside ASCII of each word (a run of
// letters, marks and digits) that is not ASCII but whose TR39 skeleton is
// ASCII, every character of it ASCII or in the table: pаypal with a
// Cyrillic а, the all-Cyrillic раураӏ, fullwidth ｐａｙｐａｌ. Russian
// words with letters of their own (привет) are not flagged.
function lookalikeSet(chars) {
  const flagged = new Set();
  let start = 0;
  for (let i = 0; i <= chars.length; i++) {
    if (i < chars.length && wordChar.test(chars[i])) continue;
    const foreign = [];
    for (let j = start; j < i; j++) if (chars[j].codePointAt(0) >= 0x80) foreign.push(j);
    if (foreign.length > 0 && foreign.every((j) => imitated(chars[j]))) foreign.forEach((j) => flagged.add(j));
    start = i + 1;
  }
  return flagged;
}

// Findings collects what a view found, for the notices above it.
export class Findings {
  constructor() { this.hidden = []; this.lookalikes = []; }
  get any() { return this.hidden.length > 0 || this.lookalikes.length > 0; }
}

// visible renders s as text for a node: hidden characters as escape
// spans, look-alike letters as flagged spans, the rest as text. json
// also escapes '"', '\' and the JSON short escapes, as JSON writes them.
export function visible(s, findings, json = false) {
  const frag = document.createDocumentFragment();
  const chars = Array.from(String(s));
  const flagged = lookalikeSet(chars);
  let run = '';
  const flush = () => { if (run) frag.append(document.createTextNode(run)); run = ''; };
  chars.forEach((ch, i) => {
    const cp = ch.codePointAt(0);
    if (json && (ch === '"' || ch === '\\')) { run += jsonEscapes[ch]; return; }
    if (!json && ch === '\n') { run += ch; return; } // a line break in prose stays one
    if (ch !== ' ' && hidden.test(ch)) {
      flush();
      const text = (json && jsonEscapes[ch]) || escapeOf(ch);
      const name = names[cp] ? ' ' + names[cp] : '';
      frag.append(el('span', { class: 'esc', title: 'U+' + hex(cp) + name + ' (shown as an escape)' }, text));
      // A line break or tab in a JSON string is JSON's own \n, \r or \t:
      // shown, but nothing to warn about.
      if (findings && !(json && (ch === '\n' || ch === '\r' || ch === '\t'))) findings.hidden.push('U+' + hex(cp) + name);
      return;
    }
    if (flagged.has(i)) {
      flush();
      const like = imitated(ch);
      frag.append(el('mark', { class: 'lookalike', title: 'U+' + hex(cp) + ' looks like "' + like + '"' }, ch));
      if (findings) findings.lookalikes.push({ ch, cp: 'U+' + hex(cp), like, text: String(s) });
      return;
    }
    run += ch;
  });
  flush();
  return frag;
}

// quoted shows s as someone's quoted words: a blockquote of text.
export function quoted(s, findings, cls = 'quote') {
  return el('blockquote', { class: cls }, visible(s, findings));
}

// jsonView renders a parsed JSON node (see json.js) as formatted JSON,
// two spaces per level, keys and strings through visible.
export function jsonView(node, findings) {
  const pre = el('pre', { class: 'json' });
  write(pre, node, findings, '');
  return pre;
}

function write(out, node, findings, indent) {
  const inner = indent + '  ';
  switch (node.t) {
    case 'obj':
      if (node.v.length === 0) { out.append('{}'); return; }
      out.append('{\n');
      node.v.forEach(([k, v], i) => {
        out.append(inner, el('span', { class: 'key' }, '"', visible(k, findings, true), '"'), ': ');
        write(out, v, findings, inner);
        out.append(i < node.v.length - 1 ? ',\n' : '\n');
      });
      out.append(indent + '}');
      return;
    case 'arr':
      if (node.v.length === 0) { out.append('[]'); return; }
      out.append('[\n');
      node.v.forEach((v, i) => {
        out.append(inner);
        write(out, v, findings, inner);
        out.append(i < node.v.length - 1 ? ',\n' : '\n');
      });
      out.append(indent + ']');
      return;
    case 'str':
      out.append(el('span', { class: 'str' }, '"', visible(node.v, findings, true), '"'));
      return;
    default: // numbers as written, true, false, null
      out.append(el('span', { class: node.t }, node.v));
  }
}
