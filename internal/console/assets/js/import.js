// Import from another Iceberg REST catalog into a warehouse (POST
// /management/v1/warehouses/{wh}/import, docs/import.md): the source, its
// credential or token (sent for this one request; the catalog never stores
// or shows it, and the fields are cleared after a run), a namespace filter
// and dry run, then what became of each namespace, table and view.
import {h, replace, errorBox, table} from './dom.js';
import {api, guarded} from './api.js';
import {href} from './nav.js';

const FIELDS = [
  ['source-uri', 'Source URI (http or https, the base engines are given)', 'https://other-catalog.example.com/api/catalog'],
  ['source-warehouse', 'Source warehouse (sent to its /v1/config)', ''],
  ['source-oauth2-server-uri', 'Source token endpoint (default: SOURCE/v1/oauth/tokens)', ''],
  ['source-scope', 'OAuth2 scope (default: catalog)', ''],
];

export function importSection(wh) {
  const inputs = Object.fromEntries(FIELDS.map(([f, , ph]) => [f, h('input', {id: 'imp-' + f, autocomplete: 'off', class: 'mono', placeholder: ph})]));
  inputs['source-uri'].required = true;
  const credential = h('input', {id: 'imp-credential', type: 'password', autocomplete: 'new-password', class: 'mono', placeholder: 'CLIENT_ID:SECRET'});
  const token = h('input', {id: 'imp-token', type: 'password', autocomplete: 'new-password', class: 'mono'});
  const namespaces = h('input', {id: 'imp-namespaces', autocomplete: 'off', class: 'mono', placeholder: 'sales, ops.eu (default: all)'});
  const dry = h('input', {id: 'imp-dry-run', type: 'checkbox', checked: true});
  const btn = h('button', {type: 'submit', id: 'imp-run'}, 'Import');
  const status = h('div', {class: 'status', role: 'status', id: 'imp-status'});
  const result = h('div', {id: 'imp-result', 'aria-live': 'polite'});
  const form = h('form', {id: 'import-form', onsubmit: async (ev) => {
    ev.preventDefault();
    const body = {'dry-run': dry.checked};
    for (const [f] of FIELDS) if (inputs[f].value.trim()) body[f] = inputs[f].value.trim();
    if (credential.value) body['source-credential'] = credential.value;
    if (token.value) body['source-token'] = token.value;
    const ns = namespaces.value.split(',').map((s) => s.trim()).filter(Boolean).map((s) => s.split('.'));
    if (ns.length) body.namespaces = ns;
    btn.disabled = true;
    replace(result);
    replace(status, dry.checked ? 'Checking (dry run)…' : 'Importing…');
    try {
      const r = await guarded('manage-warehouses', {kind: 'warehouse', warehouse: wh}, () =>
        api('POST', `/management/v1/warehouses/${encodeURIComponent(wh)}/import`, body));
      replace(status, r['dry-run'] ? 'Dry run: nothing was written.' : 'Import finished.');
      replace(result, report(wh, r));
    } catch (e) {
      replace(status, errorBox(e, 'Import'));
    } finally {
      // Cleared after every run, refused or not: a secret is not left in
      // the page.
      credential.value = '';
      token.value = '';
      btn.disabled = false;
    }
  }},
  h('p', {class: 'muted'}, 'Registers the source\'s namespaces, tables and views here by metadata location: no file is copied. ' +
    'What is here already is skipped; what cannot be imported is refused by name. The credential or token is used for this run only ' +
    'and never stored or shown back. Up to 2000 objects per run: import a namespace at a time, or use catalog import, for more.'),
  FIELDS.map(([f, label]) => [h('label', {for: 'imp-' + f}, label), inputs[f]]),
  h('label', {for: 'imp-credential'}, 'Source credential, CLIENT_ID:SECRET (write-only)'), credential,
  h('label', {for: 'imp-token'}, 'or source bearer token (write-only)'), token,
  h('label', {for: 'imp-namespaces'}, 'Namespaces (comma-separated, levels joined by dots)'), namespaces,
  h('label', {class: 'inline'}, dry, ' Dry run (read both sides, write nothing)'),
  h('div', {class: 'actions'}, btn), status);
  return h('div', {}, h('details', {}, h('summary', {}, 'Import from another Iceberg REST catalog'), form), result);
}

// report shows the counts per kind and status, why the run stopped if it
// did, and every item with its outcome and reason.
function report(wh, r) {
  const items = r.items || [];
  const done = r['dry-run'] ? 'would-import' : 'imported';
  const count = (k, s) => items.filter((it) => it.kind === k && it.status === s).length;
  const summary = ['namespace', 'table', 'view'].map((k) =>
    `${k}s: ${count(k, done)} ${done}, ${count(k, 'skipped')} skipped, ${count(k, 'refused')} refused`);
  const name = (it) => [...it.namespace, it.name].filter((x) => x !== undefined).join('.');
  const link = (it) => {
    if (r['dry-run'] || it.status === 'refused') return name(it);
    const to = it.kind === 'namespace' ? {wh, ns: it.namespace} : it.kind === 'view' ? {wh, ns: it.namespace, v: it.name} : {wh, ns: it.namespace, t: it.name};
    return h('a', {href: href(to)}, name(it));
  };
  return h('div', {},
    h('ul', {id: 'imp-summary'}, summary.map((s) => h('li', {}, s))),
    r.note && h('p', {class: 'muted'}, r.note),
    r.stopped && h('div', {class: 'error', role: 'alert'}, h('strong', {}, 'Stopped: '), r.stopped),
    table(['Kind', 'Name', 'Outcome', 'Reason'], items.map((it) =>
      h('tr', {class: 'import-item', 'data-status': it.status, 'data-name': `${it.kind} ${name(it)}`},
        h('td', {}, it.kind), h('td', {class: 'mono'}, link(it)), h('td', {class: 'outcome'}, it.status), h('td', {}, it.reason || ''))),
    {id: 'imp-items'}));
}
