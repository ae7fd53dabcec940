// Soft-deleted tables and views of a warehouse (lakehold.deletion-profile
// soft): listed until their retention ends, each with an Undrop button
// (under the old name, or a new one when that is taken).
import {h, replace, errorBox, empty} from './dom.js';
import {api} from './api.js';
import {href} from './nav.js';

const enc = encodeURIComponent;

export function deletedSection(wh) {
  const body = h('tbody', {});
  const info = h('p', {class: 'muted', 'aria-live': 'polite', id: 'deleted-info'});
  const status = h('div', {class: 'status', role: 'status', id: 'undrop-status'});
  const base = `/management/v1/warehouses/${enc(wh)}/deleted`;
  const row = (d) => {
    const rename = h('input', {'aria-label': `New name for ${d.name}`, placeholder: 'new name (if taken)', autocomplete: 'off', class: 'small'});
    const btn = h('button', {type: 'button', class: 'small', 'data-undrop': d.id}, 'Undrop');
    btn.addEventListener('click', async () => {
      btn.disabled = true;
      replace(status, 'Undropping…');
      try {
        const to = rename.value.trim() ? {namespace: d.namespace, name: rename.value.trim()} : {};
        const r = await api('POST', `${base}/${enc(d.id)}/undrop`, to);
        const link = r.kind === 'view' ? href({wh, ns: r.namespace, v: r.name}) : href({wh, ns: r.namespace, t: r.name});
        replace(status, 'Back as ', h('a', {href: link}, [...r.namespace, r.name].join('.')), '.');
        tr.remove();
      } catch (e) {
        replace(status, errorBox(e, 'Undrop'));
        btn.disabled = false;
      }
    });
    const tr = h('tr', {class: 'deleted-row', 'data-id': d.id},
      h('td', {}, d.kind), h('td', {class: 'mono'}, [...d.namespace, d.name].join('.')), h('td', {}, d['deleted-at']),
      h('td', {}, d['expires-at']), h('td', {}, d['purge-requested'] ? 'purge at expiry' : 'files kept'),
      h('td', {}, h('div', {class: 'actions'}, rename, btn)));
    return tr;
  };
  const box = h('div', {}, h('div', {class: 'scroll'}, h('table', {id: 'deleted'}, h('thead', {}, h('tr', {},
    ['Kind', 'Name', 'Deleted', 'Expires', 'Files', ''].map((x) => h('th', {scope: 'col'}, x)))), body)), info, status);
  api('GET', `${base}?pageSize=100`).then((r) => {
    body.append(...(r.deleted || []).map(row));
    replace(info, body.children.length ? `${body.children.length} deleted${r['next-page-token'] ? ', more on the server' : ''}.` : '');
    if (!body.children.length) replace(box, empty('Nothing deleted (or this warehouse deletes for good: lakehold.deletion-profile).'));
  }, (e) => replace(info, errorBox(e, 'Listing deleted tables and views')));
  return box;
}
