// The table page. The first call asks for snapshots=refs (small even for a
// table with thousands of snapshots) and renders everything but the
// timeline; the full snapshot list, column files and the native-write
// report load after it, each into its own section.
import {h, replace, loading, errorBox, empty, section, table, fmtTime, fmtBytes} from './dom.js';
import {api, can, guarded, tablePath} from './api.js';
import {schemaTable, specsTable, sortOrdersTable, fieldName} from './schema.js';
import {propsEditor} from './props.js';
import {go} from './nav.js';
import {snapshotChart} from './chart.js';
import {columnHistory} from './cfhistory.js';
import {columnDebt} from './debt.js';
import {reportsSection} from './reports.js';
import {scopedJobs} from './jobs.js';

export async function tablePage(box, wh, ns, name) {
  const t0 = performance.now();
  const path = tablePath(wh, ns, name);
  const res = {kind: 'table', warehouse: wh, namespace: ns, name};
  const head = h('h1', {tabindex: -1}, h('span', {class: 'kind'}, 'Table'), ' ', [...ns, name].join('.'));
  replace(box, head, loading('table'));
  // Asked alongside the metadata, so the page waits for neither twice.
  const mayP = Promise.all([can('table-drop', res), can('table-write-metadata', res), can('manage-grants', {kind: 'server'})]);
  let m;
  let mayDrop;
  let mayEdit;
  let mayJobs;
  try {
    m = (await api('GET', path + '?snapshots=refs')).metadata;
    [mayDrop, mayEdit, mayJobs] = await mayP;
  } catch (e) {
    replace(box, head, errorBox(e, 'Loading the table'));
    return;
  }
  const schema = (m.schemas || []).find((s) => s['schema-id'] === m['current-schema-id']);
  const fv = m['format-version'];
  const snaps = h('div', {id: 'snapshots-box'}, loading('snapshots'));
  const history = fv >= 4 ? h('div', {id: 'column-history-box'}, loading('column-file history')) : null;
  const debt = fv >= 4 ? h('div', {id: 'column-debt-box'}, loading('column-file debt')) : null;
  replace(box, head,
    h('nav', {class: 'toc', 'aria-label': 'Sections'}, ['schema', 'partitioning', 'properties', 'refs', 'snapshots', 'reports',
      fv >= 4 && 'column-files', fv >= 4 && 'column-history', fv >= 4 && 'column-debt', 'eligibility', mayJobs && 'jobs', mayDrop && 'drop'].filter(Boolean).map((s) => h('a', {href: '#', 'data-target': s, onclick: jump}, s.replace('-', ' ')))),
    h('dl', {class: 'facts', id: 'facts'},
      h('dt', {}, 'Format version'), h('dd', {id: 'format-version'}, fv),
      fv >= 4 && h('dt', {}, 'Readers'), fv >= 4 && h('dd', {id: 'v4-badge'}, h('span', {class: 'kind'}, 'v4 · column files'), ' lakehold library and server-side planning only'),
      h('dt', {}, 'Location'), h('dd', {class: 'mono'}, m.location),
      h('dt', {}, 'Table UUID'), h('dd', {class: 'mono'}, m['table-uuid']),
      h('dt', {}, 'Last updated'), h('dd', {}, fmtTime(m['last-updated-ms'])),
      h('dt', {}, 'Current snapshot'), h('dd', {class: 'mono'}, m['current-snapshot-id'] ?? 'none')),
    fv >= 4 && v4Notice(),
    section(`Schema ${schema ? schema['schema-id'] : ''}`, 'schema', schemaTable(schema, 'schema-fields'),
      (m.schemas || []).length > 1 && h('p', {class: 'muted'}, `${m.schemas.length} schemas in the history; the current one is shown.`)),
    section('Partitioning and sort order', 'partitioning', h('h3', {}, 'Partition specs'), specsTable(m, schema),
      h('h3', {}, 'Sort orders'), sortOrdersTable(m, schema)),
    section('Properties', 'properties', propsEditor(m.properties || {}, {
      label: 'table', editable: mayEdit,
      onSave: (updates, removals) => guarded('table-write-metadata', res, () => commitProps(path, m['table-uuid'], updates, removals)),
    })),
    section('Branches and tags', 'refs', refsTable(m)),
    section('Snapshots', 'snapshots', snaps),
    section('Scan and commit reports', 'reports', reportsSection(wh, ns, name)),
    fv >= 4 && section('Column files', 'column-files', columnFiles(path, schema)),
    history && section('Column-file history (REPLACED/MODIFIED)', 'column-history', history),
    debt && section('Column-file debt', 'column-debt', debt),
    section('Native-write eligibility', 'eligibility', eligibility(path)),
    mayJobs && section('Background jobs', 'jobs', scopedJobs(wh, [...ns, name].join('.'))),
    mayDrop && section('Drop table', 'drop', dropForm(wh, ns, name, path, res)));
  const all = await loadSnapshots(path, snaps, t0);
  if (!history) return;
  if (!all) {
    for (const b of [history, debt]) replace(b, empty('Needs the snapshot list, which did not load.'));
    return;
  }
  await Promise.all([columnHistory(history, path, all, schema), columnDebt(debt, wh, ns, name, all)]);
}

// v4Notice says who can no longer read a format version 4 table, and that
// there is no way back (docs/column-files.md, "Upgrading to v4").
function v4Notice() {
  return h('p', {class: 'muted', id: 'v4-notice', role: 'note'},
    'Format version 4: PyIceberg, Spark, Trino and Flink on iceberg-java 1.x, DuckDB and iceberg-go cannot read this table ' +
    '(the catalog refuses to send them its metadata). Read it with the lakehold Python library (pip install ./clients/python) ' +
    'or server-side planning with X-Iceberg-Column-Files: true. A table cannot go back from v4 to an older format version.');
}

function jump(ev) {
  ev.preventDefault();
  const el = document.getElementById(ev.currentTarget.dataset.target);
  if (el) { el.scrollIntoView(); el.querySelector('h2').setAttribute('tabindex', -1); el.querySelector('h2').focus(); }
}

function commitProps(path, uuid, updates, removals) {
  const changes = [];
  if (Object.keys(updates).length) changes.push({action: 'set-properties', updates});
  if (removals.length) changes.push({action: 'remove-properties', removals});
  return api('POST', path, {requirements: [{type: 'assert-table-uuid', uuid}], updates: changes});
}

function refsTable(m) {
  const refs = Object.entries(m.refs || {}).sort();
  if (!refs.length) return empty('No branches or tags: the table has no snapshot yet.');
  const byId = new Map((m.snapshots || []).map((s) => [s['snapshot-id'], s]));
  return table(['Name', 'Type', 'Snapshot', 'Committed'], refs.map(([n, r]) => h('tr', {'data-ref': n},
    h('td', {class: 'mono'}, n), h('td', {}, r.type), h('td', {class: 'mono'}, r['snapshot-id']),
    h('td', {}, fmtTime(byId.get(r['snapshot-id'])?.['timestamp-ms'])))), {id: 'refs-table'});
}

// loadSnapshots fetches every snapshot, draws the chart and the newest
// part of the timeline, and records how long the page took in
// data-render-ms (the browser test reads it).
async function loadSnapshots(path, box, t0) {
  let m;
  try {
    m = (await api('GET', path)).metadata;
  } catch (e) {
    replace(box, errorBox(e, 'Loading snapshots'));
    return null;
  }
  const snaps = [...(m.snapshots || [])].sort((a, b) => a['timestamp-ms'] - b['timestamp-ms'] || a['sequence-number'] - b['sequence-number']);
  if (!snaps.length) {
    replace(box, empty('No snapshots yet.'));
    box.dataset.renderMs = Math.round(performance.now() - t0);
    return snaps;
  }
  const chart = h('div', {class: 'chart', id: 'snapshot-chart'});
  const list = h('tbody', {});
  const more = h('button', {type: 'button', class: 'small'}, 'Show more');
  const newestFirst = snaps.slice().reverse();
  let shown = 0;
  const showMore = () => {
    list.append(...newestFirst.slice(shown, shown + 50).map(snapshotRow));
    shown = Math.min(shown + 50, newestFirst.length);
    more.hidden = shown >= newestFirst.length;
  };
  more.addEventListener('click', showMore);
  replace(box, h('p', {id: 'snapshot-count', 'data-count': snaps.length}, `${snaps.length} snapshots`), chart,
    h('div', {class: 'scroll'}, h('table', {id: 'snapshot-table'}, h('thead', {}, h('tr', {},
      ['Committed', 'Snapshot', 'Parent', 'Operation', 'Added records', 'Total records', 'Data files', 'Size', 'Schema'].map((x) => h('th', {scope: 'col'}, x)))), list)),
    more);
  showMore();
  snapshotChart(chart, snaps);
  box.dataset.renderMs = Math.round(performance.now() - t0);
  return snaps;
}

function snapshotRow(s) {
  const sum = s.summary || {};
  return h('tr', {'data-snapshot-id': s['snapshot-id']},
    h('td', {}, fmtTime(s['timestamp-ms'])), h('td', {class: 'mono'}, s['snapshot-id']),
    h('td', {class: 'mono'}, s['parent-snapshot-id'] ?? ''), h('td', {}, sum.operation || ''),
    h('td', {class: 'num'}, sum['added-records'] ?? ''), h('td', {class: 'num'}, sum['total-records'] ?? ''),
    h('td', {class: 'num'}, sum['total-data-files'] ?? ''), h('td', {class: 'num'}, sum['total-files-size'] ? fmtBytes(sum['total-files-size']) : ''),
    h('td', {class: 'num'}, s['schema-id'] ?? ''));
}

// columnFiles lists, per base data file, its live column files and the
// fields each carries (v4 tables).
function columnFiles(path, schema) {
  const box = h('div', {}, loading('column files'));
  api('GET', path + '/column-files').then((r) => {
    const files = r['data-files'] || [];
    if (!files.length) return replace(box, empty('No column files: every base file is read as written.'));
    const rows = [];
    for (const d of files) {
      for (const c of d['column-files'] || []) {
        rows.push(h('tr', {class: 'cf-row', 'data-base': d['data-file'], 'data-cf': c.location},
          h('td', {class: 'mono'}, short(d['data-file'])), h('td', {class: 'mono'}, short(c.location)),
          h('td', {class: 'mono', 'data-field-ids': (c['field-ids'] || []).join(',')}, (c['field-ids'] || []).map((id) => `${fieldName(schema, id)} (${id})`).join(', ')),
          h('td', {}, c['file-format']), h('td', {class: 'num'}, fmtBytes(c['file-size-in-bytes']))));
      }
    }
    replace(box, table(['Base file', 'Column file', 'Fields', 'Format', 'Size'], rows, {id: 'column-files-table'}));
  }, (e) => replace(box, errorBox(e, 'Listing column files')));
  return box;
}

// short keeps the last two path segments: locations share the table's
// prefix, which the page header already shows.
function short(loc) {
  const p = String(loc).split('/');
  return p.length > 2 ? '…/' + p.slice(-2).join('/') : loc;
}

function eligibility(path) {
  const box = h('div', {}, loading('native-write report'));
  api('GET', path + '/native-write-eligibility').then((r) => {
    const reasons = r.reasons || [];
    const warnings = r.warnings || [];
    const rows = (list, cls) => list.map((x) => h('tr', {class: cls, 'data-code': x.code},
      h('td', {class: 'mono'}, x.code), h('td', {class: 'mono'}, x.key || ''), h('td', {}, x.message)));
    replace(box, h('p', {id: 'eligible', 'data-eligible': String(!!r.eligible), class: r.eligible ? 'ok' : 'warn'},
      r.eligible ? 'Eligible: writes can use the native Parquet writer.' : 'Not eligible: writes fall back for these reasons.'),
    reasons.length ? table(['Reason', 'Property', 'Explanation'], rows(reasons, 'reason'), {id: 'eligibility-table'}) : null,
    warnings.length ? h('p', {class: 'warn'}, 'Warnings: what a native write of this table can get wrong.') : null,
    warnings.length ? table(['Warning', 'Field', 'Explanation'], rows(warnings, 'warning'), {id: 'eligibility-warnings'}) : null);
  }, (e) => replace(box, errorBox(e, 'Native-write report')));
  return box;
}

// dropForm asks for the table's full name before dropping; purge is a
// separate, unchecked box.
function dropForm(wh, ns, name, path, res) {
  const full = [...ns, name].join('.');
  const confirm = h('input', {id: 'drop-confirm', autocomplete: 'off'});
  const purge = h('input', {id: 'drop-purge', type: 'checkbox'});
  const btn = h('button', {type: 'submit', class: 'danger', id: 'drop-table', disabled: true}, 'Drop table');
  confirm.addEventListener('input', () => { btn.disabled = confirm.value !== full; });
  const status = h('div', {class: 'status', role: 'status'});
  return h('form', {onsubmit: async (ev) => {
    ev.preventDefault();
    replace(status, 'Dropping…');
    try {
      await guarded('table-drop', res, () => api('DELETE', path + (purge.checked ? '?purgeRequested=true' : '')));
      go({wh, ns});
    } catch (e) {
      replace(status, errorBox(e, 'Dropping the table'));
      if (!(await can('table-drop', res))) btn.remove();
    }
  }}, h('p', {}, 'Dropping removes the table from the catalog. With purge, its data and metadata files are deleted too.'),
  h('label', {class: 'inline'}, purge, ' Purge data and metadata files'),
  h('label', {for: 'drop-confirm'}, `Type ${full} to confirm`), confirm, h('div', {class: 'actions'}, btn), status);
}
