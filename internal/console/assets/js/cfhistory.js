// The REPLACED/MODIFIED history of a v4 table's column files. A column
// update marks each touched base file's manifest row REPLACED (what it
// carried before; in a rewritten leaf, or through the leaf's manifest
// deletion vector) and writes a MODIFIED row (what it carries now); the
// snapshot summary counts them (modified-data-files, added- and
// retired-column-files). The pairs themselves are read back from the API:
// GET …/column-files at the snapshot and at its parent, compared per base
// file. Only the newest LIMIT such snapshots are shown, two small calls
// each, so a long history costs nothing until asked for.
import {h, replace, errorBox, empty, table, fmtTime} from './dom.js';
import {api} from './api.js';
import {fieldName} from './schema.js';

const LIMIT = 20;

// columnHistory fills box from snaps (oldest first, as loadSnapshots
// returns them).
export async function columnHistory(box, path, snaps, schema) {
  const updates = snaps.filter((s) => (s.summary || {})['modified-data-files'] !== undefined).reverse();
  const dvs = snaps.filter((s) => Number((s.summary || {})['changed-deletion-vectors'] || 0) > 0).length;
  const note = dvs ? h('p', {class: 'muted'}, `${dvs} other snapshot(s) changed deletion vectors, which also write REPLACED/MODIFIED pairs; their column files did not change.`) : null;
  if (!updates.length) return replace(box, empty('No column updates: no base file has been REPLACED/MODIFIED by one.'), note);
  const cache = new Map();
  const at = (id) => {
    if (id === undefined || id === null) return Promise.resolve(new Map());
    if (!cache.has(String(id))) cache.set(String(id), api('GET', `${path}/column-files?snapshot-id=${id}`).then(byBase));
    return cache.get(String(id));
  };
  const shown = updates.slice(0, LIMIT);
  let rows;
  try {
    rows = (await Promise.all(shown.map(async (s) => pairs(s, await at(s['parent-snapshot-id']), await at(s['snapshot-id']), schema)))).flat();
  } catch (e) {
    return replace(box, errorBox(e, 'Reading column files at past snapshots'));
  }
  replace(box,
    h('p', {}, `${updates.length} column update(s)` + (updates.length > LIMIT ? `; the newest ${LIMIT} are shown.` : '.')),
    rows.length ? table(['Snapshot', 'Committed', 'Base file', 'REPLACED row carried', 'MODIFIED row carries', 'Added', 'Retired'], rows, {id: 'column-history-table'})
      : empty('The column updates left every base file with the column files it had.'),
    note);
}

// byBase turns a column-files answer into base file -> [column file].
function byBase(r) {
  return new Map((r['data-files'] || []).map((d) => [d['data-file'], d['column-files'] || []]));
}

// pairs lists, for snapshot s, one row per base file whose column files
// differ between before (its parent) and after.
function pairs(s, before, after, schema) {
  const out = [];
  for (const base of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(base) || [];
    const now = after.get(base) || [];
    const wasLoc = new Set(was.map((c) => c.location));
    const nowLoc = new Set(now.map((c) => c.location));
    const added = now.filter((c) => !wasLoc.has(c.location));
    const retired = was.filter((c) => !nowLoc.has(c.location));
    if (!added.length && !retired.length) continue;
    out.push(h('tr', {class: 'cf-hist', 'data-snapshot': s['snapshot-id'], 'data-base': base,
      'data-added': added.map((c) => c.location).join(' '), 'data-retired': retired.map((c) => c.location).join(' ')},
    h('td', {class: 'mono'}, s['snapshot-id']), h('td', {}, fmtTime(s['timestamp-ms'])), h('td', {class: 'mono'}, short(base)),
    h('td', {}, files(was, schema)), h('td', {}, files(now, schema)), h('td', {}, files(added, schema)), h('td', {}, files(retired, schema))));
  }
  return out;
}

function files(list, schema) {
  if (!list.length) return h('span', {class: 'muted'}, 'none');
  return h('ul', {class: 'plain'}, list.map((c) => h('li', {class: 'mono'}, short(c.location), ' ',
    h('span', {class: 'muted'}, '(' + (c['field-ids'] || []).map((id) => fieldName(schema, id)).join(', ') + ')'))));
}

function short(loc) {
  const p = String(loc).split('/');
  return p.length > 2 ? '…/' + p.slice(-2).join('/') : loc;
}
