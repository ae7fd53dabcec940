// Browsing and managing warehouses and namespaces.
import {scopedJobs} from './jobs.js';
import {deletedSection} from './deleted.js';
import {importSection} from './import.js';
import {h, replace, loading, errorBox, empty, section, table} from './dom.js';
import {api, can, guarded, nsPath, whPath} from './api.js';
import {propsEditor} from './props.js';
import {href, go} from './nav.js';

const PAGE = 100;

// warehousesPage lists warehouses and offers to create one.
export async function warehousesPage(main) {
  replace(main, h('h1', {tabindex: -1}, 'Warehouses'), loading('warehouses'));
  let list;
  try {
    list = (await api('GET', '/management/v1/warehouses')).warehouses || [];
  } catch (e) {
    replace(main, h('h1', {tabindex: -1}, 'Warehouses'), errorBox(e, 'Listing warehouses'));
    return;
  }
  const rows = list.map((w) => h('tr', {'data-warehouse': w.name},
    h('td', {}, h('a', {href: href({wh: w.name})}, w.name)), h('td', {class: 'mono'}, w.location)));
  const server = {kind: 'server'};
  const mayCreate = await can('manage-warehouses', server);
  replace(main, h('h1', {tabindex: -1}, 'Warehouses'),
    list.length ? table(['Name', 'Location'], rows, {id: 'warehouses'}) : empty('No warehouses yet.'),
    mayCreate && createWarehouseForm());
}

function createWarehouseForm() {
  const name = h('input', {id: 'new-wh-name', required: true, autocomplete: 'off'});
  const loc = h('input', {id: 'new-wh-location', required: true, placeholder: 's3://bucket/prefix or file:///path', autocomplete: 'off'});
  const status = h('div', {class: 'status', role: 'status'});
  return section('Create a warehouse', 'create-warehouse', h('form', {id: 'create-warehouse-form', onsubmit: async (ev) => {
    ev.preventDefault();
    replace(status, 'Creating…');
    try {
      await guarded('manage-warehouses', {kind: 'server'}, () =>
        api('POST', '/management/v1/warehouses', {name: name.value.trim(), location: loc.value.trim()}));
      go({wh: name.value.trim()});
    } catch (e) {
      replace(status, errorBox(e, 'Creating the warehouse'));
    }
  }},
  h('label', {for: 'new-wh-name'}, 'Name'), name,
  h('label', {for: 'new-wh-location'}, 'Location'), loc,
  h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Create warehouse')), status));
}

// namespacePage shows a warehouse (levels empty) or a namespace: its child
// namespaces, tables, views and functions, and what may be managed there.
export async function namespacePage(main, wh, levels) {
  const title = levels.length ? levels.join('.') : wh;
  const kind = levels.length ? 'Namespace' : 'Warehouse';
  const head = h('h1', {tabindex: -1}, h('span', {class: 'kind'}, kind), ' ', title);
  const res = {kind: levels.length ? 'namespace' : 'warehouse', warehouse: wh, namespace: levels};
  const parts = [head];
  const mayCreate = await can('namespace-create', res);
  const q = levels.length ? `?parent=${nsPath(levels)}&` : '?';
  parts.push(section('Namespaces', 'namespaces', pagedList({
    id: 'ns-list', noun: 'namespaces',
    fetch: async (tok) => {
      const r = await api('GET', `${whPath(wh)}/namespaces${q}pageSize=${PAGE}${tok ? '&pageToken=' + encodeURIComponent(tok) : ''}`);
      return {items: (r.namespaces || []).map((n) => ({label: n[n.length - 1], href: href({wh, ns: n})})), next: r['next-page-token']};
    },
  }), mayCreate && createNamespaceForm(wh, levels)));
  if (levels.length) {
    for (const [noun, seg, key] of [['tables', 'tables', 't'], ['views', 'views', 'v'], ['functions', 'functions', 'f']]) {
      parts.push(section(noun[0].toUpperCase() + noun.slice(1), noun, pagedList({
        id: noun + '-list', noun,
        fetch: async (tok) => {
          const r = await api('GET', `${whPath(wh)}/namespaces/${nsPath(levels)}/${seg}?pageSize=${PAGE}${tok ? '&pageToken=' + encodeURIComponent(tok) : ''}`);
          return {items: (r.identifiers || []).map((i) => ({label: objName(i), href: href({wh, ns: levels, [key]: objName(i)})})), next: r['next-page-token']};
        },
      })));
    }
    parts.push(section('Properties', 'properties', namespaceProps(wh, levels, res)));
  } else {
    parts.push(section('Warehouse', 'warehouse-info', warehouseInfo(wh)));
    if (await can('manage-warehouses', res)) parts.push(section('Import', 'import', importSection(wh)));
    if (await can('deleted-list', res)) parts.push(section('Deleted tables and views', 'deleted-objects', deletedSection(wh)));
    if (await can('manage-grants', {kind: 'server'})) parts.push(section('Background jobs', 'jobs', scopedJobs(wh)));
  }
  replace(main, parts);
}

// objName is an identifier's name: tables and views are listed as
// {namespace, name}, functions as a CatalogObjectIdentifier (the levels
// and the name in one array).
function objName(i) {
  return Array.isArray(i) ? i[i.length - 1] : i.name;
}

// pagedList loads pages on demand and filters what is loaded by name.
function pagedList({id, noun, fetch}) {
  const items = [];
  let next = null;
  let started = false;
  const search = h('input', {type: 'search', id: id + '-search', placeholder: `Filter ${noun} by name`, autocomplete: 'off'});
  const list = h('ul', {id, class: 'names'});
  const info = h('p', {class: 'muted', 'aria-live': 'polite'});
  const more = h('button', {type: 'button', class: 'small', hidden: true, onclick: () => load(false)}, 'Load more');
  const all = h('button', {type: 'button', class: 'small', hidden: true, onclick: () => load(true)}, 'Load all');
  const box = h('div', {class: 'paged'}, h('label', {for: id + '-search', class: 'sr'}, `Filter ${noun}`), search, list, info, h('div', {class: 'actions'}, more, all));
  const draw = () => {
    const f = search.value.trim().toLowerCase();
    const shown = items.filter((i) => i.label.toLowerCase().includes(f));
    replace(list, shown.map((i) => h('li', {}, h('a', {href: i.href}, i.label))));
    if (!items.length && !next) replace(info, `No ${noun}.`);
    else replace(info, `${shown.length} shown of ${items.length} loaded${next ? ', more on the server' : ''}.`);
    more.hidden = all.hidden = !next;
  };
  async function load(everything) {
    replace(info, `Loading ${noun}…`);
    more.disabled = all.disabled = true;
    try {
      do {
        const page = await fetch(started ? next : null);
        started = true;
        items.push(...page.items);
        next = page.next || null;
      } while (everything && next);
      draw();
    } catch (e) {
      replace(info, errorBox(e, `Listing ${noun}`));
    } finally {
      more.disabled = all.disabled = false;
    }
  }
  search.addEventListener('input', draw);
  load(false);
  return box;
}

function createNamespaceForm(wh, levels) {
  const id = 'new-ns-name';
  const name = h('input', {id, required: true, autocomplete: 'off'});
  const status = h('div', {class: 'status', role: 'status'});
  return h('form', {id: 'create-namespace-form', onsubmit: async (ev) => {
    ev.preventDefault();
    const ns = [...levels, name.value.trim()];
    replace(status, 'Creating…');
    try {
      await guarded('namespace-create', {kind: 'namespace', warehouse: wh, namespace: levels}, () =>
        api('POST', `${whPath(wh)}/namespaces`, {namespace: ns, properties: {}}));
      go({wh, ns});
    } catch (e) {
      replace(status, errorBox(e, 'Creating the namespace'));
    }
  }}, h('label', {for: id}, levels.length ? 'New child namespace' : 'New namespace'), name,
  h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Create namespace')), status);
}

function namespaceProps(wh, levels, res) {
  const box = h('div', {}, loading('properties'));
  Promise.all([api('GET', `${whPath(wh)}/namespaces/${nsPath(levels)}`), can('namespace-properties', res)]).then(([r, editable]) => {
    replace(box, propsEditor(r.properties || {}, {
      label: 'namespace', editable,
      onSave: (updates, removals) => guarded('namespace-properties', res, () =>
        api('POST', `${whPath(wh)}/namespaces/${nsPath(levels)}/properties`, {updates, removals})),
    }));
  }, (e) => replace(box, errorBox(e, 'Loading the namespace')));
  return box;
}

// warehouseInfo shows the warehouse's location and storage profile and, to
// those who may, the forms to set the profile and delete the warehouse.
function warehouseInfo(wh) {
  const box = h('div', {}, loading('warehouse'));
  const res = {kind: 'warehouse', warehouse: wh};
  Promise.all([
    api('GET', `/management/v1/warehouses/${encodeURIComponent(wh)}`),
    api('GET', `/management/v1/warehouses/${encodeURIComponent(wh)}/storage-profile`).catch((e) => (e.status === 404 ? null : Promise.reject(e))),
    can('manage-warehouses', res),
  ]).then(([w, profile, mayManage]) => {
    replace(box,
      h('dl', {}, h('dt', {}, 'Location'), h('dd', {class: 'mono'}, w.location)),
      h('h3', {}, 'Storage profile'),
      profile ? h('pre', {class: 'mono', id: 'profile'}, JSON.stringify(profile, null, 2)) : empty('No storage profile: clients get no vended credentials and no signatures.'),
      mayManage && (/^(abfss|wasbs):\/\//.test(w.location) ? azureProfileForm(wh) : profileForm(wh)),
      mayManage && deleteWarehouse(wh));
  }, (e) => replace(box, errorBox(e, 'Loading the warehouse')));
  return box;
}

// saveProfile PUTs a warehouse's storage profile and reloads the page; the
// write-only inputs are cleared once it is saved, and a refusal is shown in
// status.
async function saveProfile(wh, body, status, secrets) {
  replace(status, 'Saving…');
  try {
    await guarded('manage-warehouses', {kind: 'warehouse', warehouse: wh}, () =>
      api('PUT', `/management/v1/warehouses/${encodeURIComponent(wh)}/storage-profile`, body));
    for (const s of secrets) s.value = '';
    go({wh}, true);
  } catch (e) {
    replace(status, errorBox(e, 'Setting the profile'));
  }
}

const S3_FIELDS = ['region', 'endpoint', 'sts-endpoint', 'role-arn', 'external-id', 'sse-type', 'sse-key', 'credential-lifetime', 'access-key-id'];

function profileForm(wh) {
  const inputs = Object.fromEntries(S3_FIELDS.map((f) => [f, h('input', {id: 'sp-' + f, autocomplete: 'off', class: 'mono'})]));
  const secret = h('input', {id: 'sp-secret', type: 'password', autocomplete: 'new-password', class: 'mono'});
  const pathStyle = h('input', {id: 'sp-path-style', type: 'checkbox'});
  const signing = h('input', {id: 'sp-remote-signing', type: 'checkbox'});
  const status = h('div', {class: 'status', role: 'status'});
  return h('details', {}, h('summary', {}, 'Set an S3 storage profile'), h('form', {onsubmit: async (ev) => {
    ev.preventDefault();
    const body = {type: 's3', 'path-style-access': pathStyle.checked, 'remote-signing-enabled': signing.checked};
    for (const f of S3_FIELDS) if (inputs[f].value.trim()) body[f] = inputs[f].value.trim();
    if (secret.value) body['secret-access-key'] = secret.value;
    await saveProfile(wh, body, status, [secret]);
  }},
  h('p', {class: 'muted'}, 'The profile is replaced as a whole. The secret is sealed by the catalog and never shown back: enter it each time.'),
  S3_FIELDS.map((f) => [h('label', {for: 'sp-' + f}, f), inputs[f]]),
  h('label', {for: 'sp-secret'}, 'secret-access-key (write-only)'), secret,
  h('label', {class: 'inline'}, pathStyle, ' path-style-access'),
  h('label', {class: 'inline'}, signing, ' remote-signing-enabled (engines sign through the catalog; role-arn optional)'),
  h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Save profile')), status));
}

const AZURE_FIELDS = ['account-name', 'filesystem', 'endpoint-suffix', 'sas-lifetime', 'tenant-id', 'client-id', 'authority-host', 'endpoint'];

// azureProfileForm sets an adls profile: the account key, or a service
// principal's tenant, client id and secret (docs/credentials.md, Azure).
function azureProfileForm(wh) {
  const inputs = Object.fromEntries(AZURE_FIELDS.map((f) => [f, h('input', {id: 'az-' + f, autocomplete: 'off', class: 'mono'})]));
  const key = h('input', {id: 'az-account-key', type: 'password', autocomplete: 'new-password', class: 'mono'});
  const secret = h('input', {id: 'az-client-secret', type: 'password', autocomplete: 'new-password', class: 'mono'});
  const status = h('div', {class: 'status', role: 'status'});
  return h('details', {}, h('summary', {}, 'Set an Azure (ADLS) storage profile'), h('form', {onsubmit: async (ev) => {
    ev.preventDefault();
    const body = {type: 'adls'};
    for (const f of AZURE_FIELDS) if (inputs[f].value.trim()) body[f] = inputs[f].value.trim();
    if (key.value) body['account-key'] = key.value;
    if (secret.value) body['client-secret'] = secret.value;
    await saveProfile(wh, body, status, [key, secret]);
  }},
  h('p', {class: 'muted'}, 'The profile is replaced as a whole. Give the account key, or tenant-id, client-id and client-secret of a service principal. Secrets are sealed by the catalog and never shown back: enter them each time. Tables get SAS tokens confined to their directory (ADLS Gen2 accounts).'),
  AZURE_FIELDS.map((f) => [h('label', {for: 'az-' + f}, f), inputs[f]]),
  h('label', {for: 'az-account-key'}, 'account-key (write-only)'), key,
  h('label', {for: 'az-client-secret'}, 'client-secret (write-only)'), secret,
  h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Save profile')), status));
}

function deleteWarehouse(wh) {
  const confirm = h('input', {id: 'del-wh-confirm', autocomplete: 'off'});
  const btn = h('button', {type: 'submit', class: 'danger', disabled: true}, 'Delete warehouse');
  confirm.addEventListener('input', () => { btn.disabled = confirm.value !== wh; });
  const status = h('div', {class: 'status', role: 'status'});
  return h('details', {}, h('summary', {}, 'Delete this warehouse'), h('form', {onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      await guarded('manage-warehouses', {kind: 'warehouse', warehouse: wh}, () =>
        api('DELETE', `/management/v1/warehouses/${encodeURIComponent(wh)}`));
      go({});
    } catch (e) {
      replace(status, errorBox(e, 'Deleting the warehouse'));
    }
  }}, h('p', {}, 'Only an empty warehouse can be deleted.'),
  h('label', {for: 'del-wh-confirm'}, `Type ${wh} to confirm`), confirm, h('div', {class: 'actions'}, btn), status));
}
