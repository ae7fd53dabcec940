// Charts over time (a table's growth over its snapshots, its reports, its
// column-file debt), drawn with the vendored uPlot (assets/vendor, MIT; a
// canvas chart that stays fast at 10,000 points).
import {h, replace, fmtBytes} from './dom.js';

// series reads total-* from each snapshot summary. When no snapshot has a
// total (some writers only record added-*), it sums added minus deleted.
function series(snaps, total, added, removed) {
  if (snaps.some((s) => s.summary && s.summary[total] !== undefined)) {
    return snaps.map((s) => (s.summary && s.summary[total] !== undefined ? Number(s.summary[total]) : null));
  }
  let acc = 0;
  return snaps.map((s) => {
    const sum = s.summary || {};
    acc += Number(sum[added] || 0) - Number(sum[removed] || 0);
    return acc;
  });
}

// count shortens a number: 1.2k, 3.4M, 5.6G.
export const count = (n) => (Math.abs(n) >= 1e9 ? (n / 1e9).toFixed(1) + 'G' : Math.abs(n) >= 1e6 ? (n / 1e6).toFixed(1) + 'M' : Math.abs(n) >= 1e3 ? (n / 1e3).toFixed(1) + 'k' : String(n));

// snapshotChart draws records, data files and size over time into el.
export function snapshotChart(el, snaps) {
  const xs = snaps.map((s) => s['timestamp-ms'] / 1000);
  plots(el, xs, [
    {title: 'Records', fmt: count, series: [{label: 'Records', ys: series(snaps, 'total-records', 'added-records', 'deleted-records'), color: '#1f6feb'}]},
    {title: 'Data files', fmt: count, series: [{label: 'Data files', ys: series(snaps, 'total-data-files', 'added-data-files', 'deleted-data-files'), color: '#2da44e'}]},
    {title: 'Size', fmt: fmtBytes, series: [{label: 'Size', ys: series(snaps, 'total-files-size', 'added-files-size', 'removed-files-size'), color: '#bf5700'}]},
  ]);
}

// plots draws one time chart per entry of charts into el, all over xs
// (seconds, ascending): {title, fmt, series: [{label, ys, color}], points}
// (points: draw dots, for sparse series such as reports).
export function plots(el, xs, charts) {
  if (typeof window.uPlot !== 'function') {
    replace(el, h('p', {class: 'muted'}, 'Chart library not loaded.'));
    return;
  }
  const width = Math.max(260, Math.min(el.clientWidth || 900, 1200));
  replace(el);
  for (const c of charts) {
    const box = h('figure', {class: 'plot', 'aria-label': `${c.title} over time`});
    el.append(box);
    // eslint-disable-next-line no-new
    new window.uPlot({
      title: c.title, width, height: 160,
      scales: {x: {time: true}},
      series: [{}, ...c.series.map((s) => ({label: s.label, stroke: s.color, width: 1.5,
        points: {show: !!c.points, size: 5, fill: s.color}, value: (u, v) => (v === null || v === undefined ? '' : c.fmt(v))}))],
      axes: [{}, {size: 70, values: (u, vals) => vals.map(c.fmt)}],
      legend: {show: true},
    }, [xs, ...c.series.map((s) => s.ys)], box);
  }
}
