// Charts of a table's growth over its snapshots, drawn with the vendored
// uPlot (assets/vendor, MIT; a canvas chart that stays fast at 10,000
// points).
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

const count = (n) => (Math.abs(n) >= 1e9 ? (n / 1e9).toFixed(1) + 'G' : Math.abs(n) >= 1e6 ? (n / 1e6).toFixed(1) + 'M' : Math.abs(n) >= 1e3 ? (n / 1e3).toFixed(1) + 'k' : String(n));

// snapshotChart draws records, data files and size over time into el.
export function snapshotChart(el, snaps) {
  if (typeof window.uPlot !== 'function') {
    replace(el, h('p', {class: 'muted'}, 'Chart library not loaded.'));
    return;
  }
  const xs = snaps.map((s) => s['timestamp-ms'] / 1000);
  const charts = [
    ['Records', series(snaps, 'total-records', 'added-records', 'deleted-records'), count, '#1f6feb'],
    ['Data files', series(snaps, 'total-data-files', 'added-data-files', 'deleted-data-files'), count, '#2da44e'],
    ['Size', series(snaps, 'total-files-size', 'added-files-size', 'removed-files-size'), fmtBytes, '#bf5700'],
  ];
  const width = Math.max(260, Math.min(el.clientWidth || 900, 1200));
  replace(el);
  for (const [label, ys, fmt, color] of charts) {
    const box = h('figure', {class: 'plot', 'aria-label': `${label} over time`});
    el.append(box);
    // eslint-disable-next-line no-new
    new window.uPlot({
      title: label, width, height: 160,
      scales: {x: {time: true}},
      series: [{}, {label, stroke: color, width: 1.5, value: (u, v) => (v === null ? '' : fmt(v))}],
      axes: [{}, {size: 70, values: (u, vals) => vals.map(fmt)}],
      legend: {show: true},
    }, [xs, ys], box);
  }
}
