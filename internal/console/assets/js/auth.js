// Sign-in, by the methods /ui/config.json offers (either or both):
//
// - OpenID Connect (auth.issuer): authorization code with PKCE, done in
//   the browser as a public client (no client secret). The access token
//   is kept in sessionStorage (this tab only, gone when it closes).
// - A built-in service principal (auth.builtin): client id and secret
//   exchanged at the catalog's token endpoint; the token is held in
//   memory only (builtin.js).
//
// Either token is sent as a bearer header; the catalog validates it like
// any engine's token. The OIDC flow follows RFC 7636 and OIDC discovery
// and is tested against a real Keycloak (docs/console.md).
import {builtinToken, dropBuiltin, configureBuiltin} from './builtin.js';

export {signInBuiltin, onSessionEnd} from './builtin.js';

const KEY = 'lakehold.token';
const PENDING = 'lakehold.pkce';

let config = {auth: null};

// token returns the current access token, or '' when signed out or expired.
export function token() {
  const b = builtinToken();
  if (b) return b;
  if (!config.auth || !config.auth.issuer) return '';
  try {
    const t = JSON.parse(sessionStorage.getItem(KEY) || 'null');
    if (t && t.expires > Date.now()) return t.access;
  } catch (e) { /* a corrupt entry counts as signed out */ }
  return '';
}

export function signedIn() { return token() !== ''; }

export function signOut() {
  dropBuiltin();
  sessionStorage.removeItem(KEY);
}

function b64url(bytes) {
  let s = '';
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function randomString() {
  return b64url(crypto.getRandomValues(new Uint8Array(32)));
}

async function discovery() {
  const issuer = config.auth.issuer.replace(/\/+$/, '');
  const res = await fetch(issuer + '/.well-known/openid-configuration', {credentials: 'omit'});
  if (!res.ok) throw new Error(`OIDC discovery failed: HTTP ${res.status}`);
  return res.json();
}

const redirectURI = () => location.origin + location.pathname;

// signIn sends the browser to the provider's authorization endpoint.
export async function signIn() {
  const d = await discovery();
  const verifier = randomString();
  const state = randomString();
  const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
  sessionStorage.setItem(PENDING, JSON.stringify({verifier, state, hash: location.hash}));
  const q = new URLSearchParams({
    response_type: 'code', client_id: config.auth['client-id'], redirect_uri: redirectURI(),
    scope: config.auth.scopes || 'openid', state, code_challenge: challenge, code_challenge_method: 'S256',
  });
  location.assign(d.authorization_endpoint + '?' + q);
}

// finishSignIn completes a redirect back from the provider (?code=&state=)
// by exchanging the code for a token. It returns true when it consumed a
// callback.
async function finishSignIn() {
  const q = new URLSearchParams(location.search);
  if (!q.has('code') && !q.has('error')) return false;
  const pending = JSON.parse(sessionStorage.getItem(PENDING) || 'null');
  sessionStorage.removeItem(PENDING);
  history.replaceState(null, '', redirectURI() + ((pending && pending.hash) || ''));
  if (q.has('error')) throw new Error('Sign-in refused by the provider: ' + q.get('error'));
  if (!pending || pending.state !== q.get('state')) throw new Error('Sign-in state does not match; try again');
  const d = await discovery();
  const res = await fetch(d.token_endpoint, {
    method: 'POST', credentials: 'omit',
    headers: {'Content-Type': 'application/x-www-form-urlencoded'},
    body: new URLSearchParams({
      grant_type: 'authorization_code', code: q.get('code'), redirect_uri: redirectURI(),
      client_id: config.auth['client-id'], code_verifier: pending.verifier,
    }),
  });
  if (!res.ok) throw new Error(`Token exchange failed: HTTP ${res.status}`);
  const t = await res.json();
  const life = Number(t.expires_in) > 0 ? Number(t.expires_in) * 1000 : 5 * 60 * 1000;
  sessionStorage.setItem(KEY, JSON.stringify({access: t.access_token, expires: Date.now() + life - 10000}));
  return true;
}

// initAuth loads /ui/config.json and finishes a pending OIDC sign-in. It
// returns the config ({auth: null} when authentication is off).
export async function initAuth() {
  const res = await fetch('config.json', {credentials: 'omit', cache: 'no-store'});
  config = res.ok ? await res.json() : {auth: null};
  if (config.auth && config.auth.builtin) configureBuiltin(config.auth.builtin);
  if (config.auth && config.auth.issuer) await finishSignIn();
  return config;
}
