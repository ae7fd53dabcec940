// Background jobs (a purge after a drop with purge, ...): the queue kept in
// the catalog database and run by any replica's workers. Listed through
// GET /management/v1/jobs, which needs manage-grants on the server.
import {h, replace, errorBox} from './dom.js';
import {api} from './api.js';

const enc = encodeURIComponent;
export const JOB_STATES = ['available', 'scheduled', 'pending', 'running', 'retryable', 'completed', 'cancelled', 'discarded'];

// jobsList renders a paged job table for the query built by query() (a
// string starting with '&', or ''); reload(fresh) fetches again.
export function jobsList(id, query) {
  const body = h('tbody', {});
  const info = h('p', {class: 'muted', 'aria-live': 'polite', id: id + '-info'});
  const more = h('button', {type: 'button', class: 'small', hidden: true, id: id + '-more'}, 'Load more');
  let next = null;
  const load = async (fresh) => {
    if (fresh) { body.replaceChildren(); next = null; }
    replace(info, 'Loading jobs…');
    try {
      const r = await api('GET', `/management/v1/jobs?pageSize=50${query()}${next ? '&pageToken=' + enc(next) : ''}`);
      body.append(...(r.jobs || []).map(jobRow));
      next = r['next-page-token'] || null;
      replace(info, body.children.length ? `${body.children.length} jobs shown${next ? ', more on the server' : ''}.` : 'No jobs.');
    } catch (e) {
      replace(info, errorBox(e, 'Listing jobs'));
    }
    more.hidden = !next;
  };
  more.addEventListener('click', () => load(false));
  const el = h('div', {class: 'jobs'}, h('div', {class: 'scroll'}, h('table', {id}, h('thead', {}, h('tr', {},
    ['ID', 'Kind', 'State', 'Table', 'Attempts', 'Created', 'Finished', 'Last error'].map((x) => h('th', {scope: 'col'}, x)))), body)),
  info, more);
  return {el, load};
}

function jobRow(j) {
  const last = (j.errors || []).at(-1);
  const bad = j.state === 'discarded' || j.state === 'cancelled' || j.state === 'retryable';
  return h('tr', {class: 'job-row', 'data-id': j.id, 'data-state': j.state},
    h('td', {class: 'num'}, j.id), h('td', {class: 'mono'}, j.kind), h('td', {class: bad ? 'warn' : (j.state === 'completed' ? 'ok' : '')}, j.state),
    h('td', {class: 'mono'}, j.table ? `${j.warehouse}/${j.table}` : (j.warehouse || '')),
    h('td', {class: 'num'}, `${j.attempt} of ${j['max-attempts']}`), h('td', {}, j['created-at']), h('td', {}, j['finalized-at'] || ''),
    h('td', {class: 'mono'}, last ? `attempt ${last.attempt}: ${last.error}` : ''));
}

// jobsPage lists every job, with filters.
export async function jobsPage(box) {
  const head = h('h1', {tabindex: -1}, 'Background jobs');
  const mk = (id, attrs) => h('input', {id, autocomplete: 'off', ...attrs});
  const f = {warehouse: mk('jobs-warehouse', {placeholder: 'warehouse'}), table: mk('jobs-table', {placeholder: 'ns.table (needs warehouse)'}),
    kind: mk('jobs-kind', {placeholder: 'e.g. purge-table'}),
    state: h('select', {id: 'jobs-state'}, ['', ...JOB_STATES].map((s) => h('option', {value: s}, s || 'any state')))};
  let query = '';
  const list = jobsList('jobs', () => query);
  const filters = h('form', {id: 'jobs-filters', onsubmit: (ev) => {
    ev.preventDefault();
    const q = new URLSearchParams();
    for (const k of Object.keys(f)) if (f[k].value.trim()) q.set(k, f[k].value.trim());
    query = q.toString() ? '&' + q : '';
    list.load(true);
  }}, Object.entries(f).map(([k, el]) => [h('label', {for: el.id}, k), el]), h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Filter')));
  replace(box, head, h('p', {class: 'muted'}, 'Work that catalog changes enqueue in the same transaction and any replica\'s workers run: ' +
    'failed attempts are retried with backoff, and a job whose replica died runs again after its lease.'),
  h('details', {open: true}, h('summary', {}, 'Filters'), filters), list.el);
  await list.load(true);
}

// scopedJobs is the jobs of one warehouse, or of one table of it (live or
// dropped), for the warehouse and table pages.
export function scopedJobs(wh, table) {
  const list = jobsList(table ? 'table-jobs' : 'warehouse-jobs', () => `&warehouse=${enc(wh)}${table ? '&table=' + enc(table) : ''}`);
  list.load(true);
  return list.el;
}
