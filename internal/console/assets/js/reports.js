// The Reports section of the table page: the scan and commit reports
// engines sent (POST …/metrics) and the catalog stored, read back through
// GET /management/v1/…/reports and drawn over time. The newest MAX of
// each kind are read, a page at a time, so a busy table costs a bounded
// number of calls.
import {h, replace, loading, errorBox, empty, table, fmtTime, fmtBytes} from './dom.js';
import {api, nsPath} from './api.js';
import {plots, count} from './chart.js';

const MAX = 1000;
const PAGE = 500;
const SHOWN = 10;

// reportsPath is the management route of a table's stored reports.
export const reportsPath = (wh, ns, t) =>
  `/management/v1/warehouses/${encodeURIComponent(wh)}/namespaces/${nsPath(ns)}/tables/${encodeURIComponent(t)}/reports`;

// reportsSection returns the section's box and fills it when the reports
// arrive.
export function reportsSection(wh, ns, name) {
  const box = h('div', {id: 'reports-box'}, loading('reports'));
  const path = reportsPath(wh, ns, name);
  Promise.all([readAll(path, 'scan-report'), readAll(path, 'commit-report')]).then(
    ([scans, commits]) => show(box, scans, commits),
    (e) => replace(box, refusal(e)));
  return box;
}

// readAll pages through one kind of report, newest first, stopping at MAX.
// It resolves to {list, more}: more is true when reports were left unread.
async function readAll(path, type) {
  const list = [];
  let token = null;
  do {
    const q = new URLSearchParams({type, 'page-size': String(Math.min(PAGE, MAX - list.length))});
    if (token) q.set('page-token', token);
    const r = await api('GET', `${path}?${q}`);
    list.push(...(r.reports || []).filter((x) => x['report-type'] === type));
    token = r['next-page-token'] || null;
  } while (token && list.length < MAX);
  return {list: list.slice(0, MAX), more: !!token};
}

// refusal says why there is nothing to show: the route missing (reports
// off, or a catalog that predates them), no grant, or another error as it
// came.
function refusal(e) {
  // A catalog without the route answers 400 "No route for …".
  if (e.status === 404 || (e.status === 400 && /^No route for /.test(e.message))) {
    return h('p', {class: 'empty', id: 'reports-off'}, 'This catalog serves no stored reports (the reports route answered 404): ' +
      'storing them is off, or the catalog predates them. Engines\' reports are then counted and dropped.');
  }
  if (e.status === 403) {
    return h('p', {class: 'empty', id: 'reports-denied'}, 'You hold no grant that shows this table\'s stored reports (403): ', e.message);
  }
  return errorBox(e, 'Loading reports');
}

function show(box, scans, commits) {
  const n = scans.list.length + commits.list.length;
  if (!n) {
    return replace(box, h('p', {class: 'empty', id: 'reports-empty'}, 'No scan or commit reports are stored for this table yet. ' +
      'Engines send one after each scan plan and each commit (POST …/metrics), when their metrics reporter is the REST one.'));
  }
  const capped = scans.more || commits.more;
  const parts = [scanPart(scans.list), commitPart(commits.list)];
  replace(box,
    h('p', {id: 'reports-summary', 'data-scans': scans.list.length, 'data-commits': commits.list.length, 'data-capped': String(capped)},
      `${scans.list.length} scan report(s) and ${commits.list.length} commit report(s)` +
      (capped ? `: only the newest ${MAX} of each kind are read.` : '.')),
    h('h3', {}, 'Scans'), parts[0].nodes,
    h('h3', {}, 'Commits'), parts[1].nodes);
  // Drawn once in the page: a chart takes its width from its box.
  for (const p of parts) p.draw();
}

// --- Scans --------------------------------------------------------------

function scanPart(list) {
  if (!list.length) return {nodes: empty('No scan reports.'), draw: () => {}};
  const rows = list.map(scanValues);
  const old = rows.slice().reverse();
  const charts = h('div', {class: 'chart', id: 'scan-charts'});
  const draw = () => plots(charts, old.map((r) => r.at / 1000), [
    {title: 'Planning duration', fmt: fmtMs, points: true, series: [{label: 'Planning', ys: old.map((r) => r.planning), color: '#8250df'}]},
    {title: 'Data files', fmt: count, points: true, series: [
      {label: 'Scanned', ys: old.map((r) => r.scanned), color: '#1f6feb'},
      {label: 'Skipped', ys: old.map((r) => r.skipped), color: '#9a6700'}]},
    {title: 'Bytes planned', fmt: fmtBytes, points: true, series: [{label: 'Bytes', ys: old.map((r) => r.bytes), color: '#bf5700'}]},
  ]);
  return {draw, nodes: [charts, table(['Received', 'Snapshot', 'Planning', 'Data files scanned', 'Skipped', 'Delete files', 'Bytes'],
    rows.slice(0, SHOWN).map((r) => h('tr', {class: 'scan-row', 'data-id': r.id},
      h('td', {}, fmtTime(r.at)), h('td', {class: 'mono'}, r.snapshot ?? ''), h('td', {class: 'num', 'data-ms': r.planning ?? ''}, fmtMs(r.planning)),
      h('td', {class: 'num'}, r.scanned ?? ''), h('td', {class: 'num'}, r.skipped ?? ''), h('td', {class: 'num'}, r.deletes ?? ''),
      h('td', {class: 'num', 'data-bytes': r.bytes ?? ''}, r.bytes === null ? '' : fmtBytes(r.bytes)))), {id: 'scan-table'})]};
}

function scanValues(x) {
  const m = (x.report || {}).metrics || {};
  return {id: x.id, at: Number(x['received-at-ms']), snapshot: x['snapshot-id'] ?? (x.report || {})['snapshot-id'],
    planning: durationMs(m['total-planning-duration']), scanned: counter(m['result-data-files']),
    skipped: counter(m['skipped-data-files']), deletes: counter(m['result-delete-files']), bytes: counter(m['total-file-size-in-bytes'])};
}

// --- Commits ------------------------------------------------------------

function commitPart(list) {
  if (!list.length) return {nodes: empty('No commit reports.'), draw: () => {}};
  const rows = list.map(commitValues);
  const old = rows.slice().reverse();
  const charts = h('div', {class: 'chart', id: 'commit-charts'});
  const draw = () => plots(charts, old.map((r) => r.at / 1000), [
    {title: 'Commit duration', fmt: fmtMs, points: true, series: [{label: 'Duration', ys: old.map((r) => r.duration), color: '#8250df'}]},
    {title: 'Attempts', fmt: count, points: true, series: [{label: 'Attempts', ys: old.map((r) => r.attempts), color: '#cf222e'}]},
    {title: 'Data files', fmt: count, points: true, series: [
      {label: 'Added', ys: old.map((r) => r.added), color: '#2da44e'},
      {label: 'Removed', ys: old.map((r) => r.removed), color: '#9a6700'}]},
  ]);
  return {draw, nodes: [charts, table(['Received', 'Snapshot', 'Operation', 'Duration', 'Attempts', 'Files added', 'Removed', 'Records added'],
    rows.slice(0, SHOWN).map((r) => h('tr', {class: 'commit-row', 'data-id': r.id},
      h('td', {}, fmtTime(r.at)), h('td', {class: 'mono'}, r.snapshot ?? ''), h('td', {}, r.operation),
      h('td', {class: 'num', 'data-ms': r.duration ?? ''}, fmtMs(r.duration)), h('td', {class: 'num'}, r.attempts ?? ''),
      h('td', {class: 'num'}, r.added ?? ''), h('td', {class: 'num'}, r.removed ?? ''), h('td', {class: 'num'}, r.records ?? ''))), {id: 'commit-table'})]};
}

function commitValues(x) {
  const rep = x.report || {};
  const m = rep.metrics || {};
  return {id: x.id, at: Number(x['received-at-ms']), snapshot: x['snapshot-id'] ?? rep['snapshot-id'], operation: rep.operation || '',
    duration: durationMs(m['total-duration']), attempts: counter(m.attempts), added: counter(m['added-data-files']),
    removed: counter(m['removed-data-files']), records: counter(m['added-records'])};
}

// --- Values -------------------------------------------------------------

// counter reads an Iceberg counter ({unit, value}) or a bare number; null
// when the report has none.
export function counter(c) {
  if (c === undefined || c === null) return null;
  const v = Number(typeof c === 'object' ? c.value : c);
  return Number.isFinite(v) ? v : null;
}

const UNIT_MS = {nanoseconds: 1e-6, microseconds: 1e-3, milliseconds: 1, seconds: 1e3, minutes: 6e4, hours: 3.6e6, days: 8.64e7};

// durationMs reads a timer in milliseconds: an Iceberg timer result
// ({count, time-unit, total-duration}) whose duration is a number in its
// unit (nanoseconds when the unit is missing, Iceberg's own) or an
// ISO-8601 duration such as "PT0.123S" (what Java's reporter writes), or
// such a string or number alone. null when there is none or it does not
// parse.
export function durationMs(t) {
  if (t === undefined || t === null) return null;
  if (typeof t === 'string') return isoMs(t);
  if (typeof t === 'number') return t;
  const d = t['total-duration'];
  if (typeof d === 'string') return isoMs(d);
  const v = Number(d) * (UNIT_MS[String(t['time-unit'] || 'nanoseconds').toLowerCase()] ?? NaN);
  return Number.isFinite(v) ? v : null;
}

const ISO = /^P(?:(-?\d+(?:\.\d+)?)D)?(?:T(?:(-?\d+(?:\.\d+)?)H)?(?:(-?\d+(?:\.\d+)?)M)?(?:(-?\d+(?:\.\d+)?)S)?)?$/;

function isoMs(s) {
  const m = ISO.exec(s.trim().toUpperCase());
  if (!m || s.trim().toUpperCase() === 'P' || /T$/.test(s.trim())) return null;
  const [d, hh, mm, ss] = m.slice(1).map((x) => Number(x || 0));
  return ((d * 24 + hh) * 60 + mm) * 60000 + ss * 1000;
}

// fmtMs shows a duration in ms or s.
export function fmtMs(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '';
  return Math.abs(v) < 1000 ? `${Math.round(v * 10) / 10} ms` : `${(v / 1000).toFixed(2)} s`;
}
