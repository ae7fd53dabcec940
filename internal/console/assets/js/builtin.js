// Sign-in as a built-in service principal: the person types the client id
// and secret the catalog issued (`catalog principal create`, or the
// Service principals page) and the browser exchanges them at the
// catalog's own token endpoint (POST /v1/oauth/tokens, client-credentials
// grant, form-urlencoded), exactly as an engine does. The endpoint is
// same-origin, so the CSP's connect-src 'self' covers it.
//
// The access token is held in this module's memory only: never in
// localStorage, sessionStorage or a cookie, so a reload or a closed tab
// forgets it and the person signs in again. The secret is not kept at
// all: the form clears its field before the request leaves.
//
// Before the token expires it is exchanged for a fresh one with the
// token-exchange grant (RFC 8693, the grant the Iceberg Java client
// refreshes with; the catalog answers it for its own built-in tokens).
// When that is refused (the principal's secret was rotated or the
// principal deleted), or the catalog stays unreachable until the token
// expires, the session ends and the person is asked to sign in again.

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

let endpoint = '/v1/oauth/tokens';
let held = null; // {access, expires}: the current token, or null
let timer = 0;
let ended = () => {};

// SignInError is a refused or failed exchange, shaped like api.js's
// ApiError (status, type, message) so that errorBox shows it the same way.
export class SignInError extends Error {
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

// configureBuiltin takes /ui/config.json's auth.builtin.
export function configureBuiltin(cfg) {
  if (cfg && cfg['token-endpoint']) endpoint = cfg['token-endpoint'];
}

// onSessionEnd registers fn(error), called when a held token could not be
// renewed and was dropped.
export function onSessionEnd(fn) { ended = fn; }

// builtinToken returns the held access token, or '' when there is none
// or it has expired.
export function builtinToken() {
  return held && held.expires > Date.now() ? held.access : '';
}

// dropBuiltin forgets the token (sign-out) and stops its renewal.
export function dropBuiltin() {
  held = null;
  clearTimeout(timer);
}

// signInBuiltin exchanges a client id and secret for a token and holds
// it. It throws a SignInError when the catalog refuses.
export async function signInBuiltin(clientID, secret) {
  dropBuiltin();
  hold(await post({grant_type: 'client_credentials', client_id: clientID, client_secret: secret}));
}

async function post(params) {
  let res;
  try {
    res = await fetch(endpoint, {
      method: 'POST', credentials: 'omit', cache: 'no-store',
      headers: {'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json'},
      body: new URLSearchParams(params),
    });
  } catch (e) {
    throw new SignInError(0, 'NetworkError', 'The catalog could not be reached.');
  }
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (res.ok && data && typeof data.access_token === 'string' && data.access_token) return data;
  throw refusal(res, data);
}

// refusal turns a failed answer into a SignInError a person can act on.
// The token endpoint answers OAuth errors ({error, error_description});
// server failures come as Iceberg ErrorModels ({error: {type, message}}).
function refusal(res, data) {
  if (res.status === 401) {
    return new SignInError(401, 'invalid_client', 'The catalog refused this client id and secret (wrong, rotated or deleted).');
  }
  if (res.status === 429) {
    const wait = Number(res.headers.get('Retry-After'));
    const when = Number.isFinite(wait) && wait > 0 ? `in ${Math.ceil(wait)} s` : 'in a moment';
    return new SignInError(429, 'TooManyRequests', `Too many sign-in attempts: try again ${when}.`);
  }
  if (data && typeof data.error === 'string') {
    return new SignInError(res.status, data.error, data.error_description || data.error);
  }
  const e = (data && typeof data.error === 'object' && data.error) || {};
  return new SignInError(res.status, e.type || 'HTTPError', e.message || `HTTP ${res.status}`);
}

// hold keeps a token answer and schedules its renewal: at 80% of its
// lifetime, and at most 5 minutes before it ends. Locally it counts as
// expired a little before the catalog's expiry (at most 10 s), so that a
// call is not sent with a token about to lapse.
function hold(t) {
  const life = Number(t.expires_in) > 0 ? Number(t.expires_in) * 1000 : 5 * 60 * 1000;
  held = {access: t.access_token, expires: Date.now() + life - Math.min(10000, life / 10)};
  clearTimeout(timer);
  timer = setTimeout(renew, life - Math.min(5 * 60 * 1000, life / 5));
}

async function renew() {
  const current = held;
  if (!current) return;
  try {
    const t = await post({grant_type: TOKEN_EXCHANGE, subject_token: current.access, subject_token_type: ACCESS_TOKEN});
    if (held === current) hold(t);
  } catch (e) {
    if (held !== current) return; // signed out, or in again, meanwhile
    const left = current.expires - Date.now();
    // Unreachable, throttled or failing: try again while the token lasts.
    if ((e.status === 0 || e.status === 429 || e.status >= 500) && left > 2000) {
      timer = setTimeout(renew, Math.min(15000, left / 2));
      return;
    }
    dropBuiltin();
    ended(e);
  }
}
