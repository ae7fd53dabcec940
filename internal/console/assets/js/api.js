// The console's only way to the catalog: the same JSON API engines use,
// with the signed-in person's bearer token. No cookies are sent, so a
// mutating call cannot be forged cross-site.
import {token, signOut} from './auth.js';

// ApiError is a failed call: the HTTP status and the ErrorModel's type and
// message, shown to the person as they are.
export class ApiError extends Error {
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

// exactIntegers keeps an integer too large for a double (snapshot ids are
// random 62-bit numbers) as its exact decimal text, so that it can be
// shown and sent back unchanged. It needs the reviver's source text
// (Chromium 114+, Firefox 135+); elsewhere such ids stay rounded.
function exactIntegers(key, value, context) {
  if (typeof value === 'number' && !Number.isSafeInteger(value) && context && /^-?\d+$/.test(context.source)) return context.source;
  return value;
}

// api calls the catalog and returns the decoded JSON body (null for an
// empty one). It throws an ApiError for a non-2xx answer or a network
// failure (status 0).
export async function api(method, path, body) {
  // The console reads format version 4 tables: it says so on every call,
  // or the catalog refuses to answer with v4 metadata (docs/column-files.md).
  const headers = {Accept: 'application/json', 'X-Iceberg-Column-Files': 'true'};
  const tok = token();
  if (tok) headers.Authorization = 'Bearer ' + tok;
  const init = {method, headers, credentials: 'omit', cache: 'no-store'};
  if (body !== undefined) init.body = JSON.stringify(body);
  // A JSON body, and any call that may change something even without one
  // (rotate, delete), says application/json: the catalog's JSON routes
  // refuse other content types (a form posted cross-site cannot send it).
  if (body !== undefined || (method !== 'GET' && method !== 'HEAD')) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'NetworkError', 'The catalog could not be reached');
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text, exactIntegers); } catch (e) { data = null; }
  }
  if (!res.ok) {
    // A refused token (expired, revoked) is forgotten, so the next
    // render offers sign-in again instead of repeating the failure.
    if (res.status === 401 && tok) signOut();
    const e = (data && data.error) || {};
    throw new ApiError(res.status, e.type || 'HTTPError', e.message || `HTTP ${res.status}`);
  }
  return data;
}

// Path helpers: namespace levels are URL-encoded one by one and joined by
// the 0x1F separator, as the REST spec asks.
export const nsPath = (levels) => levels.map(encodeURIComponent).join('%1F');
export const whPath = (wh) => '/v1/' + encodeURIComponent(wh);
export const tablePath = (wh, ns, t) => `${whPath(wh)}/namespaces/${nsPath(ns)}/tables/${encodeURIComponent(t)}`;
export const viewPath = (wh, ns, v) => `${whPath(wh)}/namespaces/${nsPath(ns)}/views/${encodeURIComponent(v)}`;
export const functionPath = (wh, ns, f) => `${whPath(wh)}/namespaces/${nsPath(ns)}/functions/${encodeURIComponent(f)}`;

// --- What the person may do -------------------------------------------
//
// can(action, resource) is the one place the console asks whether to offer
// an action. Actions are the catalog's privilege names (table-drop,
// manage-warehouses, ...); resource is {kind, warehouse, namespace, name}.
// It asks GET /management/v1/privileges once per resource per page (the
// catalog answers with one authorizer decision) and resolves to whether
// the action is held there, inherited from a container included. A 403
// seen since still withdraws the action, in case a grant was revoked after
// the page asked. If the catalog cannot say (an older catalog, a 503), the
// action is offered and the catalog decides when it is tried.
const denied = new Set();
let authOn = false;
let held = new Map(); // resource key -> Promise<Set|null>, for this page

export function setAuthOn(on) { authOn = on; }

// newPage forgets the privileges asked for the previous page, so that a
// grant or revoke is seen on the next navigation.
export function newPage() { held = new Map(); }

// forgetPrivileges forgets everything learnt about the signed-in person,
// 403s included: someone else may have signed in.
export function forgetPrivileges() {
  denied.clear();
  held = new Map();
}

function keys(resource) {
  const out = [`${resource.kind}:*`];
  if (resource.warehouse) {
    const ns = resource.namespace || [];
    for (let i = 0; i <= ns.length; i++) out.push(`w:${resource.warehouse}/${ns.slice(0, i).join('\x1f')}`);
    if (resource.name) out.push(`w:${resource.warehouse}/${ns.join('\x1f')}/${resource.name}`);
  }
  return out;
}

// privilegesOf resolves to the set of privileges held on resource, or null
// when the catalog could not answer.
function privilegesOf(resource) {
  const ns = resource.namespace || [];
  // The parent of a top-level namespace is the warehouse.
  const kind = resource.kind === 'namespace' && !ns.length ? 'warehouse' : resource.kind;
  const q = new URLSearchParams({kind});
  if (resource.warehouse) q.set('warehouse', resource.warehouse);
  if (ns.length) q.set('namespace', ns.join('\x1f'));
  if (resource.name) q.set('name', resource.name);
  const key = q.toString();
  if (!held.has(key)) {
    held.set(key, api('GET', '/management/v1/privileges?' + key).then(
      (r) => new Set(r.privileges || []), () => null));
  }
  return held.get(key);
}

// can resolves to true when the action should be offered on resource.
export async function can(action, resource) {
  if (!authOn) return true;
  if (keys(resource).some((k) => denied.has(action + '|' + k))) return false;
  const privs = await privilegesOf(resource);
  return privs === null || privs.has(action);
}

// refused records a 403 for action on resource.
export function refused(action, resource) {
  const k = keys(resource);
  denied.add(action + '|' + k[k.length - 1]);
}

// guarded runs fn; on a 403 it records the refusal before rethrowing, so
// the button that led there disappears on the next render.
export async function guarded(action, resource, fn) {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ApiError && e.status === 403) refused(action, resource);
    throw e;
  }
}
