// The function page (a SQL UDF), read-only: the function's facts and, for
// each definition (an overload), its signature, current version and that
// version's SQL per dialect. Functions are created and dropped through
// the management API or the CLI, not here.
import {h, replace, loading, errorBox, empty, section, fmtTime} from './dom.js';
import {api, functionPath} from './api.js';
import {sqlBlocks} from './view.js';

export async function functionPage(box, wh, ns, name) {
  const head = h('h1', {tabindex: -1}, h('span', {class: 'kind'}, 'Function'), ' ', [...ns, name].join('.'));
  replace(box, head, loading('function'));
  let res;
  try {
    res = await api('GET', functionPath(wh, ns, name));
  } catch (e) {
    replace(box, head, errorBox(e, 'Loading the function'));
    return;
  }
  const m = res.metadata;
  const defs = m.definitions || [];
  replace(box, head,
    h('dl', {class: 'facts'},
      h('dt', {}, 'Name'), h('dd', {id: 'function-name'}, name),
      h('dt', {}, 'Function UUID'), h('dd', {class: 'mono', id: 'function-uuid'}, m['function-uuid']),
      h('dt', {}, 'Format version'), h('dd', {}, m['format-version']),
      h('dt', {}, 'Metadata location'), h('dd', {class: 'mono'}, res['metadata-location']),
      m.location && [h('dt', {}, 'Location'), h('dd', {class: 'mono'}, m.location)],
      m.doc && [h('dt', {}, 'Description'), h('dd', {}, m.doc)]),
    section('Definitions', 'definitions', defs.length ? defs.map(definition) : empty('No definition.')));
}

// typeText shows a UDF type: a primitive is its name, a nested type its
// JSON.
function typeText(t) {
  return typeof t === 'string' ? t : JSON.stringify(t);
}

// definition shows one overload; data-definition-id lets a reader (and
// the browser test) find it.
function definition(d) {
  const versions = d.versions || [];
  const cur = versions.find((v) => v['version-id'] === d['current-version-id']);
  const params = (d.parameters || []).map((p) => `${p.name} ${typeText(p.type)}`).join(', ');
  return h('article', {class: 'definition', 'data-definition-id': d['definition-id']},
    h('h3', {class: 'mono'}, d['definition-id']),
    h('dl', {class: 'facts'},
      h('dt', {}, 'Parameters'), h('dd', {class: 'mono params'}, params || '(none)'),
      h('dt', {}, 'Returns'), h('dd', {class: 'mono returns'}, typeText(d['return-type'])),
      h('dt', {}, 'Type'), h('dd', {}, d['function-type'] || 'udf'),
      h('dt', {}, 'Current version'), h('dd', {class: 'current-version'}, d['current-version-id']),
      cur && [h('dt', {}, 'Committed'), h('dd', {}, fmtTime(cur['timestamp-ms']))]),
    cur ? sqlBlocks(cur) : empty('The current version is missing.'));
}
