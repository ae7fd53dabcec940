// The view page: the current version's SQL per dialect, its schema, every
// version, and properties.
import {h, replace, loading, errorBox, empty, section, table, fmtTime} from './dom.js';
import {api, viewPath} from './api.js';
import {schemaTable} from './schema.js';

export async function viewPage(box, wh, ns, name) {
  const head = h('h1', {tabindex: -1}, h('span', {class: 'kind'}, 'View'), ' ', [...ns, name].join('.'));
  replace(box, head, loading('view'));
  let m;
  try {
    m = (await api('GET', viewPath(wh, ns, name))).metadata;
  } catch (e) {
    replace(box, head, errorBox(e, 'Loading the view'));
    return;
  }
  const versions = [...(m.versions || [])].sort((a, b) => b['version-id'] - a['version-id']);
  const cur = versions.find((v) => v['version-id'] === m['current-version-id']) || versions[0];
  const schema = cur && (m.schemas || []).find((s) => s['schema-id'] === cur['schema-id']);
  const props = Object.entries(m.properties || {}).sort();
  replace(box, head,
    h('dl', {class: 'facts'},
      h('dt', {}, 'Format version'), h('dd', {}, m['format-version']),
      h('dt', {}, 'Location'), h('dd', {class: 'mono'}, m.location),
      h('dt', {}, 'View UUID'), h('dd', {class: 'mono'}, m['view-uuid']),
      h('dt', {}, 'Current version'), h('dd', {id: 'current-version'}, m['current-version-id'])),
    section('SQL', 'sql', cur ? sqlBlocks(cur) : empty('No version.')),
    section('Schema', 'schema', schemaTable(schema, 'schema-fields')),
    section('Versions', 'versions', table(['Version', 'Committed', 'Schema', 'Default namespace', 'Operation', 'Dialects'],
      versions.map((v) => h('tr', {'data-version-id': v['version-id'], class: v === cur ? 'current' : ''},
        h('td', {class: 'num'}, v['version-id']), h('td', {}, fmtTime(v['timestamp-ms'])), h('td', {class: 'num'}, v['schema-id']),
        h('td', {class: 'mono'}, (v['default-namespace'] || []).join('.')), h('td', {}, (v.summary || {}).operation || ''),
        h('td', {}, (v.representations || []).map((r) => r.dialect).join(', ')))), {id: 'versions-table'})),
    section('Properties', 'properties', props.length
      ? table(['Key', 'Value'], props.map(([k, v]) => h('tr', {}, h('td', {class: 'mono'}, k), h('td', {class: 'mono'}, v))))
      : empty('No properties.')));
}

// sqlBlocks shows a version's SQL representations, one per dialect (view
// and function versions have the same shape).
export function sqlBlocks(version) {
  const reps = (version.representations || []).filter((r) => r.type === 'sql');
  if (!reps.length) return empty('No SQL representation.');
  return reps.map((r) => h('figure', {class: 'sql', 'data-dialect': r.dialect},
    h('figcaption', {}, r.dialect), h('pre', {class: 'mono', tabindex: 0}, r.sql)));
}
