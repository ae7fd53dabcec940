// Access control pages: built-in principals, roles with their grants and
// assignments, and the audit log. Everything goes through
// /management/v1/*, which needs manage-grants on the server; a caller
// without it sees the API's 403 in each section.
import {h, replace, loading, errorBox, empty, section, table, fmtTime} from './dom.js';
import {api} from './api.js';
import {href, go} from './nav.js';

const M = '/management/v1';
const enc = encodeURIComponent;

// The catalog's privileges (service.AllPrivileges) and securable kinds,
// offered in the grant form; the API validates the pair.
export const PRIVILEGES = ['deleted-list', 'deleted-undrop', 'manage-grants', 'manage-warehouses', 'namespace-create', 'namespace-drop', 'namespace-list',
  'namespace-properties', 'table-create', 'table-drop', 'table-list', 'table-read-data', 'table-read-metadata',
  'table-write-data', 'table-write-metadata', 'view-create', 'view-drop', 'view-read', 'view-replace'];
const KINDS = ['server', 'warehouse', 'namespace', 'table', 'view'];

// form builds a labelled form; fields are [id, label, input] triples.
function form(id, fields, submit, onsubmit) {
  const status = h('div', {class: 'status', role: 'status'});
  const btn = h('button', {type: 'submit'}, submit);
  return h('form', {id, onsubmit: async (ev) => {
    ev.preventDefault();
    btn.disabled = true;
    replace(status, 'Working…');
    try {
      replace(status, (await onsubmit()) || 'Done.');
    } catch (e) {
      replace(status, errorBox(e, submit));
    } finally {
      btn.disabled = false;
    }
  }}, fields.map(([fid, label, input]) => [h('label', {for: fid}, label), input]), h('div', {class: 'actions'}, btn), status);
}

function input(id, attrs) { return h('input', {id, autocomplete: 'off', ...attrs}); }

function select(id, options) {
  return h('select', {id}, options.map((o) => h('option', {value: o}, o)));
}

// confirmButton asks a second time before running fn: the first click
// turns the button into "Really …?".
function confirmButton(label, what, fn, attrs) {
  const btn = h('button', {type: 'button', class: 'small danger', ...attrs}, label);
  let armed = false;
  btn.addEventListener('click', async () => {
    if (!armed) { armed = true; btn.textContent = `Really ${what}?`; return; }
    btn.disabled = true;
    await fn();
  });
  return btn;
}

// secretBox shows a client id and secret once, with the warning that the
// catalog keeps only its hash.
function secretBox(c) {
  return h('div', {class: 'secret', id: 'new-secret', role: 'alert'},
    h('p', {class: 'warn'}, `Secret for ${c.name}: copy it now, it is not shown again.`),
    h('dl', {class: 'facts'}, h('dt', {}, 'client-id'), h('dd', {class: 'mono', id: 'new-client-id'}, c['client-id']),
      h('dt', {}, 'client-secret'), h('dd', {class: 'mono', id: 'new-client-secret'}, c['client-secret'])));
}

// principalsPage lists built-in service principals (paged) and creates,
// rotates and deletes them. A new or rotated secret is shown once.
export async function principalsPage(box) {
  const head = h('h1', {tabindex: -1}, 'Service principals');
  const shown = h('div', {id: 'secret-box'});
  const body = h('tbody', {});
  const more = h('button', {type: 'button', class: 'small', hidden: true}, 'Load more');
  let next = null;
  const row = (p) => h('tr', {'data-principal': p.name},
    h('td', {}, p.name), h('td', {class: 'mono'}, p['client-id']), h('td', {class: 'num'}, p['secret-generation']),
    h('td', {}, fmtTime(p['created-at-ms'])), h('td', {}, fmtTime(p['rotated-at-ms'])),
    h('td', {}, h('div', {class: 'actions'},
      h('button', {type: 'button', class: 'small', 'data-rotate': p.name, onclick: async () => {
        try {
          replace(shown, secretBox(await api('POST', `${M}/principals/${enc(p.name)}/rotate`)));
        } catch (e) { replace(shown, errorBox(e, 'Rotating the secret')); }
      }}, 'Rotate secret'),
      confirmButton('Delete', `delete ${p.name}`, async () => {
        try {
          await api('DELETE', `${M}/principals/${enc(p.name)}`);
          go({admin: 'principals'}, true);
        } catch (e) { replace(shown, errorBox(e, 'Deleting the principal')); }
      }, {'data-delete': p.name}))));
  const load = async () => {
    const r = await api('GET', `${M}/principals?pageSize=100${next ? '&pageToken=' + enc(next) : ''}`);
    body.append(...(r.principals || []).map(row));
    next = r['next-page-token'] || null;
    if (!body.children.length) body.append(h('tr', {class: 'none'}, h('td', {colspan: 6, class: 'empty'}, 'No service principals yet.')));
    more.hidden = !next;
  };
  more.addEventListener('click', () => load().catch((e) => replace(shown, errorBox(e, 'Listing principals'))));
  replace(box, head, loading('principals'));
  try {
    await load();
  } catch (e) {
    replace(box, head, errorBox(e, 'Listing principals'));
    return;
  }
  const name = input('new-principal-name', {required: true});
  replace(box, head,
    h('p', {class: 'muted'}, 'Built-in principals are engines and jobs that exchange a client id and secret for a token at POST /v1/oauth/tokens.'),
    shown,
    h('div', {class: 'scroll'}, h('table', {id: 'principals'}, h('thead', {}, h('tr', {},
      ['Name', 'Client id', 'Secret generation', 'Created', 'Rotated', ''].map((x) => h('th', {scope: 'col'}, x)))), body)),
    more,
    section('Create a principal', 'create-principal', form('create-principal-form', [['new-principal-name', 'Name', name]], 'Create principal', async () => {
      const c = await api('POST', `${M}/principals`, {name: name.value.trim()});
      replace(shown, secretBox(c));
      body.querySelector('.none')?.remove();
      body.append(row(await api('GET', `${M}/principals/${enc(c.name)}`)));
      name.value = '';
      return `Created ${c.name}.`;
    })));
}

// rolesPage lists roles and creates one.
export async function rolesPage(box) {
  const head = h('h1', {tabindex: -1}, 'Roles');
  replace(box, head, loading('roles'));
  let roles;
  try {
    roles = (await api('GET', `${M}/roles`)).roles || [];
  } catch (e) {
    replace(box, head, errorBox(e, 'Listing roles'));
    return;
  }
  const name = input('new-role-name', {required: true});
  const desc = input('new-role-description');
  replace(box, head,
    h('p', {class: 'muted'}, 'A role holds grants (a privilege on a securable, inherited below it) and is assigned to built-in principals, OIDC subjects or OIDC groups.'),
    roles.length ? table(['Role', 'Description'], roles.map((r) => h('tr', {'data-role': r.name},
      h('td', {}, h('a', {href: href({admin: 'roles', role: r.name})}, r.name)), h('td', {}, r.description))), {id: 'roles'}) : empty('No roles yet.'),
    section('Create a role', 'create-role', form('create-role-form', [['new-role-name', 'Name', name], ['new-role-description', 'Description', desc]],
      'Create role', async () => {
        const r = await api('POST', `${M}/roles`, {name: name.value.trim(), description: desc.value});
        go({admin: 'roles', role: r.name});
      })));
}

// resourceText renders a securable as the audit log does:
// kind:warehouse/ns.ns/name.
export function resourceText(r) {
  let s = r.kind + ':' + (r.warehouse || '');
  if (r.namespace && r.namespace.length) s += '/' + r.namespace.join('.');
  if (r.name) s += '/' + r.name;
  return s;
}

// rolePage shows a role's grants and assignments, with forms to add and
// remove them, and deletes the role.
export async function rolePage(box, role) {
  const head = h('h1', {tabindex: -1}, h('span', {class: 'kind'}, 'Role'), ' ', role);
  const base = `${M}/roles/${enc(role)}`;
  replace(box, head, loading('role'));
  let r;
  let grants;
  let assignments;
  try {
    [r, grants, assignments] = await Promise.all([api('GET', base), api('GET', base + '/grants'), api('GET', base + '/assignments')]);
  } catch (e) {
    replace(box, head, errorBox(e, 'Loading the role'));
    return;
  }
  const reload = () => go({admin: 'roles', role}, true);
  const status = h('div', {class: 'status', role: 'status'});
  const fail = (what) => (e) => replace(status, errorBox(e, what));
  replace(box, head, r.description ? h('p', {}, r.description) : null, status,
    section('Grants', 'grants', (grants.grants || []).length ? table(['Privilege', 'On', ''], grants.grants.map((g) =>
      h('tr', {class: 'grant', 'data-grant': g.privilege + '@' + resourceText(g.resource)},
        h('td', {class: 'mono'}, g.privilege), h('td', {class: 'mono'}, resourceText(g.resource)),
        h('td', {}, confirmButton('Revoke', 'revoke', () => api('POST', base + '/grants/revoke', g).then(reload, fail('Revoking'))))))) : empty('No grants.'),
    grantForm(base, reload)),
    section('Assignments', 'assignments', (assignments.assignments || []).length ? table(['Kind', 'Name', ''], assignments.assignments.map((a) =>
      h('tr', {class: 'assignment', 'data-assignee': a.kind + ':' + a.name},
        h('td', {}, a.kind), h('td', {class: 'mono'}, a.name),
        h('td', {}, confirmButton('Remove', 'remove', () => api('DELETE', `${base}/assignments/${enc(a.kind)}/${enc(a.name)}`).then(reload, fail('Removing'))))))) : empty('Assigned to no one.'),
    assignForm(base, reload)),
    section('Delete this role', 'delete-role', h('p', {}, 'Deleting a role removes its grants and assignments.'),
      confirmButton('Delete role', `delete ${role}`, () => api('DELETE', base).then(() => go({admin: 'roles'}), fail('Deleting the role')), {id: 'delete-role'})));
}

function grantForm(base, done) {
  const priv = select('grant-privilege', PRIVILEGES);
  const kind = select('grant-kind', KINDS);
  const wh = input('grant-warehouse');
  const ns = input('grant-namespace', {placeholder: 'levels separated by dots, e.g. sales.eu'});
  const name = input('grant-name', {placeholder: 'table or view name'});
  return form('grant-form', [['grant-privilege', 'Privilege', priv], ['grant-kind', 'On a', kind], ['grant-warehouse', 'Warehouse', wh],
    ['grant-namespace', 'Namespace', ns], ['grant-name', 'Name', name]], 'Add grant', async () => {
    const resource = {kind: kind.value};
    if (wh.value.trim()) resource.warehouse = wh.value.trim();
    if (ns.value.trim()) resource.namespace = ns.value.trim().split('.');
    if (name.value.trim()) resource.name = name.value.trim();
    await api('POST', base + '/grants', {privilege: priv.value, resource});
    done();
  });
}

function assignForm(base, done) {
  const kind = select('assign-kind', ['group', 'oidc', 'builtin']);
  const name = input('assign-name', {required: true, placeholder: 'group name, OIDC subject or principal name'});
  return form('assign-form', [['assign-kind', 'Assign to a', kind], ['assign-name', 'Name', name]], 'Assign role', async () => {
    await api('POST', base + '/assignments', {kind: kind.value, name: name.value.trim()});
    done();
  });
}

// auditPage shows the audit trail newest first, filtered and paged by the
// API (pageSize, pageToken); Load more fetches the next page.
export async function auditPage(box) {
  const head = h('h1', {tabindex: -1}, 'Audit log');
  const f = {principal: input('audit-principal', {placeholder: 'oidc:alice or builtin:etl'}),
    resource: input('audit-resource', {placeholder: 'prefix, e.g. table:wh/sales'}),
    action: input('audit-action', {placeholder: 'e.g. vend-credentials'}),
    since: input('audit-since', {type: 'datetime-local', step: 1}), until: input('audit-until', {type: 'datetime-local', step: 1})};
  const body = h('tbody', {});
  const info = h('p', {class: 'muted', 'aria-live': 'polite', id: 'audit-info'});
  const more = h('button', {type: 'button', class: 'small', hidden: true, id: 'audit-more'}, 'Load more');
  let query = '';
  let next = null;
  const load = async (fresh) => {
    if (fresh) { body.replaceChildren(); next = null; }
    replace(info, 'Loading events…');
    try {
      const r = await api('GET', `${M}/audit?pageSize=50${query}${next ? '&pageToken=' + enc(next) : ''}`);
      body.append(...(r.events || []).map(auditRow));
      next = r['next-page-token'] || null;
      replace(info, body.children.length ? `${body.children.length} events shown${next ? ', more on the server' : ''}.` : 'No events match.');
    } catch (e) {
      replace(info, errorBox(e, 'Listing audit events'));
    }
    more.hidden = !next;
  };
  more.addEventListener('click', () => load(false));
  const filters = h('form', {id: 'audit-filters', onsubmit: (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const k of ['principal', 'resource', 'action']) if (f[k].value.trim()) q.set(k, f[k].value.trim());
    for (const k of ['since', 'until']) if (f[k].value) q.set(k, new Date(f[k].value).toISOString());
    query = q.toString() ? '&' + q : '';
    load(true);
  }}, Object.entries(f).map(([k, el]) => [h('label', {for: el.id}, k + (k === 'since' || k === 'until' ? ' (local time)' : '')), el]),
  h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Filter')));
  replace(box, head, h('details', {open: true}, h('summary', {}, 'Filters'), filters),
    h('div', {class: 'scroll'}, h('table', {id: 'audit'}, h('thead', {}, h('tr', {},
      ['Time', 'Principal', 'Action', 'Resource', 'Decision', 'Status', 'Detail'].map((x) => h('th', {scope: 'col'}, x)))), body)),
    info, more);
  await load(true);
}

function auditRow(e) {
  return h('tr', {class: 'audit-row', 'data-id': e.id},
    h('td', {}, e.at), h('td', {class: 'mono'}, e.principal), h('td', {class: 'mono'}, e.action),
    h('td', {class: 'mono'}, e.resource), h('td', {class: e.decision === 'allowed' ? 'ok' : 'warn'}, e.decision),
    h('td', {class: 'num'}, e.status), h('td', {class: 'mono'}, e.detail));
}
