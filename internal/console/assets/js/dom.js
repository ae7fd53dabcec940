// Small DOM helpers. The console never assigns HTML strings: every value
// from the API becomes a text node, so a name or property cannot inject
// markup.

// h builds an element: h('a', {href: '#/'}, 'text', child, [more]).
// Attributes starting with "on" become event listeners.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// replace empties el and fills it with children.
export function replace(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function loading(what) {
  return h('p', {class: 'loading', role: 'status'}, `Loading ${what}…`);
}

// errorBox shows an API error plainly: status, error type and message.
export function errorBox(err, what) {
  const status = err && err.status ? `${err.status} ${err.type || ''}`.trim() : 'Error';
  const hint = err && err.status === 403 ? ' You do not hold the privilege for this.' : '';
  return h('div', {class: 'error', role: 'alert'},
    h('strong', {}, `${what ? what + ': ' : ''}${status}`), ' — ', (err && err.message) || String(err), hint);
}

export function empty(text) {
  return h('p', {class: 'empty'}, text);
}

// table renders rows as an HTML table inside a horizontally scrolling box.
export function table(headers, rows, attrs) {
  return h('div', {class: 'scroll'}, h('table', attrs || {},
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', {scope: 'col'}, x)))),
    h('tbody', {}, rows)));
}

export function section(title, id, ...children) {
  return h('section', {id, 'aria-labelledby': id + '-h'}, h('h2', {id: id + '-h'}, title), children);
}

export function fmtTime(ms) {
  if (ms === undefined || ms === null) return '';
  return new Date(Number(ms)).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

export function fmtBytes(n) {
  n = Number(n);
  if (!Number.isFinite(n)) return '';
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${u[i]}`;
}
