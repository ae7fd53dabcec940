// The column-file debt of a v4 table: what compaction works down. Each
// column update leaves a base file with more column files to stitch on
// every read, and the base columns they supersede as bytes no read uses
// (retired bytes). GET /management/v1/…/column-file-debt measures both at
// a snapshot; it is asked now and at the newest LIMIT snapshots that
// changed column files (column updates and compactions), a bounded
// number of calls whatever the history's length.
import {h, replace, errorBox, empty, fmtBytes, fmtTime} from './dom.js';
import {api, nsPath} from './api.js';
import {plots} from './chart.js';

const LIMIT = 12;

const debtPath = (wh, ns, t) =>
  `/management/v1/warehouses/${encodeURIComponent(wh)}/namespaces/${nsPath(ns)}/tables/${encodeURIComponent(t)}/column-file-debt`;

// columnDebt fills box from snaps (oldest first, as loadSnapshots returns
// them).
export async function columnDebt(box, wh, ns, name, snaps) {
  const path = debtPath(wh, ns, name);
  const changed = snaps.filter((s) => {
    const sum = s.summary || {};
    return sum['added-column-files'] !== undefined || sum['retired-column-files'] !== undefined;
  }).slice(-LIMIT);
  let now;
  const past = [];
  try {
    // One call at a time: each reads the snapshot's data leaves, so a page
    // view asks the server for one such read at once, not LIMIT + 1.
    now = await api('GET', path);
    for (const s of changed) {
      past.push({...(await api('GET', `${path}?snapshot-id=${s['snapshot-id']}`)), at: s['timestamp-ms']});
    }
  } catch (e) {
    return replace(box, errorBox(e, 'Reading the column-file debt'));
  }
  // The current snapshot closes the series when a later one (an append)
  // changed no column files.
  const cur = snaps.find((s) => String(s['snapshot-id']) === String(now['snapshot-id']));
  if (changed.length && cur && cur !== changed[changed.length - 1]) past.push({...now, at: cur['timestamp-ms']});
  // data-points lists what is drawn (snapshot:column files:retired bytes).
  const chart = h('div', {class: 'chart', id: 'debt-chart',
    'data-points': past.map((d) => `${d['snapshot-id']}:${d['column-files']}:${d['retired-bytes']}`).join(' ')});
  replace(box, facts(now), changed.length ? chart : empty('No snapshot has changed column files yet.'),
    changed.length ? h('p', {class: 'muted'}, `At the ${changed.length} snapshot(s) that changed column files` +
      (changed.length === LIMIT ? ` (the newest ${LIMIT})` : '') + `, the oldest on ${fmtTime(changed[0]['timestamp-ms'])}.`) : null);
  if (!changed.length) return;
  plots(chart, past.map((d) => d.at / 1000), [
    {title: 'Column files per base', fmt: (v) => String(Math.round(v * 100) / 100), points: true, series: [
      {label: 'Average', ys: past.map(perBase), color: '#1f6feb'},
      {label: 'Most on one base', ys: past.map((d) => d['max-column-files-per-base']), color: '#cf222e'}]},
    {title: 'Retired bytes', fmt: fmtBytes, points: true, series: [{label: 'Retired', ys: past.map((d) => d['retired-bytes']), color: '#bf5700'}]},
  ]);
}

const perBase = (d) => (d.bases ? d['column-files'] / d.bases : 0);

// facts lists the debt now, beside the thresholds compaction uses.
function facts(d) {
  const ratio = d['measured-bytes'] ? d['retired-bytes'] / d['measured-bytes'] : 0;
  const partial = d['measured-bases'] < d.bases;
  return h('dl', {class: 'facts', id: 'debt-now', 'data-bases': d.bases, 'data-column-files': d['column-files'],
    'data-max': d['max-column-files-per-base'], 'data-retired': d['retired-bytes'], 'data-candidates': d.candidates},
  h('dt', {}, 'Bases with column files'), h('dd', {}, d.bases),
  h('dt', {}, 'Live column files'), h('dd', {}, `${d['column-files']} (${Math.round(perBase(d) * 100) / 100} per base)`),
  h('dt', {}, 'Most on one base'), h('dd', {}, `${d['max-column-files-per-base']}; compaction folds a base with more than ${d['max-column-files']}`),
  h('dt', {}, 'Retired bytes'), h('dd', {}, `${fmtBytes(d['retired-bytes'])}, ${(ratio * 100).toFixed(1)}% of the measured bases' size` +
    (partial ? ` (${d['measured-bases']} of ${d.bases} bases measured, those with the most column files)` : '') +
    `; compaction folds a base above ${(d['max-retired-ratio'] * 100).toFixed(0)}%`),
  h('dt', {}, 'Compaction candidates'), h('dd', {}, `${d.candidates}` + (partial ? ' among the measured bases' : '')));
}
