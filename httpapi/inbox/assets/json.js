// An order-keeping JSON reader. JSON.parse moves integer-like keys to the
// front of an object and rounds numbers; the inbox must show the stored
// arguments exactly, so it reads responses into nodes that keep the key
// order and each number as written: {t: 'obj', v: [[key, node], …]},
// {t: 'arr', v: [node, …]}, {t: 'str', v}, {t: 'num', v: raw text},
// {t: 'true'|'false'|'null', v: raw text}.

export function parseNodes(text) {
  let i = 0;
  const fail = (what) => { throw new SyntaxError('JSON: ' + what + ' at ' + i); };
  const ws = () => { while (i < text.length && ' \t\r\n'.includes(text[i])) i++; };
  const str = () => {
    let out = '';
    i++; // the opening quote
    for (;;) {
      const c = text[i++];
      if (c === undefined) fail('unterminated string');
      if (c === '"') return out;
      if (c !== '\\') { out += c; continue; }
      const e = text[i++];
      if (e === 'u') {
        out += String.fromCharCode(parseInt(text.slice(i, i + 4), 16));
        i += 4;
      } else {
        const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }[e];
        if (simple === undefined) fail('bad escape');
        out += simple;
      }
    }
  };
  const value = () => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const v = [];
      ws();
      if (text[i] === '}') { i++; return { t: 'obj', v }; }
      for (;;) {
        ws();
        if (text[i] !== '"') fail('expected a key');
        const k = str();
        ws();
        if (text[i++] !== ':') fail('expected :');
        v.push([k, value()]);
        ws();
        const d = text[i++];
        if (d === '}') return { t: 'obj', v };
        if (d !== ',') fail('expected , or }');
      }
    }
    if (c === '[') {
      i++;
      const v = [];
      ws();
      if (text[i] === ']') { i++; return { t: 'arr', v }; }
      for (;;) {
        v.push(value());
        ws();
        const d = text[i++];
        if (d === ']') return { t: 'arr', v };
        if (d !== ',') fail('expected , or ]');
      }
    }
    if (c === '"') return { t: 'str', v: str() };
    const lit = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
    lit.lastIndex = i;
    const m = lit.exec(text);
    if (!m) fail('unexpected character');
    i += m[0].length;
    const t = m[0] === 'true' || m[0] === 'false' || m[0] === 'null' ? m[0] : 'num';
    return { t, v: m[0] };
  };
  const root = value();
  ws();
  if (i !== text.length) fail('trailing data');
  return root;
}

// ARGS is where plain() keeps, on a record, the node of its arguments.
export const ARGS = Symbol('arguments as stored');

// plain turns a node into ordinary values; an object with "arguments"
// keeps that node under ARGS, for jsonView.
export function plain(node) {
  switch (node.t) {
    case 'obj': {
      const o = {};
      for (const [k, v] of node.v) {
        // defineProperty: a key "__proto__" stays an ordinary property
        Object.defineProperty(o, k, { value: plain(v), enumerable: true, writable: true, configurable: true });
        if (k === 'arguments') o[ARGS] = v;
      }
      return o;
    }
    case 'arr': return node.v.map(plain);
    case 'str': return node.v;
    case 'num': return Number(node.v);
    default: return JSON.parse(node.v);
  }
}

// decode reads a response body into plain values (with ARGS).
export function decode(text) {
  return plain(parseNodes(text));
}

// encodeNodes writes a node as indented JSON text that keeps the key
// order and each number as written: the stored arguments, for editing.
export function encodeNodes(node, indent = '') {
  const inner = indent + '  ';
  switch (node.t) {
    case 'obj':
      if (!node.v.length) return '{}';
      return '{\n' + node.v.map(([k, v]) => inner + JSON.stringify(k) + ': ' + encodeNodes(v, inner)).join(',\n') + '\n' + indent + '}';
    case 'arr':
      if (!node.v.length) return '[]';
      return '[\n' + node.v.map((v) => inner + encodeNodes(v, inner)).join(',\n') + '\n' + indent + ']';
    case 'str': return JSON.stringify(node.v);
    default: return node.v;
  }
}

// argumentsProblem says what keeps text from being a call's arguments
// as a submit takes them (SPEC §4: one JSON object, no duplicate keys,
// no lone surrogates, numbers a double holds), or '' when nothing does.
export function argumentsProblem(text) {
  let root;
  try { root = parseNodes(text.trim()); } catch (e) { return 'not JSON (' + e.message + ')'; }
  if (root.t !== 'obj') return 'the arguments must be a JSON object';
  const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
  const check = (node, path) => {
    if (node.t === 'num' && !Number.isFinite(Number(node.v))) return path + ': the number ' + node.v + ' is too large';
    if (node.t === 'str' && lone.test(node.v)) return path + ': a string holds a lone surrogate';
    if (node.t === 'arr') {
      for (let i = 0; i < node.v.length; i++) { const p = check(node.v[i], path + '[' + i + ']'); if (p) return p; }
    }
    if (node.t === 'obj') {
      const seen = new Set();
      for (const [k, v] of node.v) {
        if (lone.test(k)) return path + ': a key holds a lone surrogate';
        if (seen.has(k)) return path + ': the key ' + JSON.stringify(k) + ' appears twice';
        seen.add(k);
        const p = check(v, path + '.' + k);
        if (p) return p;
      }
    }
    return '';
  };
  return check(root, 'arguments');
}
