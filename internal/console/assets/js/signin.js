// The sign-in page: every method /ui/config.json offers. OIDC sends the
// browser to the provider; a built-in service principal signs in with a
// form (client id and secret) whose secret field is cleared as soon as it
// is read, whatever the answer.
import {h, replace, errorBox, section} from './dom.js';
import {signIn, signInBuiltin} from './auth.js';

// signInPage fills main with the sign-in page for auth (config.auth).
// done is called once a built-in sign-in succeeded; notice, when set, is
// why the previous session ended.
export function signInPage(main, auth, done, notice) {
  const parts = [h('h1', {tabindex: -1}, 'Sign in')];
  if (notice) {
    parts.push(h('div', {class: 'error', role: 'alert', id: 'session-ended'},
      h('strong', {}, 'Your session ended'), ' — ', String(notice.message || notice).replace(/\.?$/, '.'), ' Sign in again.'));
  }
  if (auth.issuer) {
    parts.push(h('p', {}, 'This catalog requires sign-in with your organisation account.'),
      h('button', {type: 'button', id: 'signin-oidc', onclick: () => signIn().catch((e) => replace(main, errorBox(e, 'Sign-in')))},
      auth.builtin ? 'Sign in with your organisation account' : 'Sign in'));
  }
  else parts.push(h('p', {}, 'This catalog requires sign-in.'));
  if (auth.builtin) parts.push(builtinForm(done, !!auth.issuer));
  replace(main, parts);
}

function builtinForm(done, both) {
  // No name attributes: should the form ever be submitted natively, it
  // carries nothing (and never puts the secret in a URL).
  const id = h('input', {id: 'signin-client-id', required: true, autocomplete: 'off', autocapitalize: 'off', spellcheck: 'false'});
  const secret = h('input', {id: 'signin-secret', type: 'password', required: true, autocomplete: 'off'});
  const submit = h('button', {type: 'submit'}, 'Sign in');
  const status = h('div', {class: 'status', id: 'signin-status', role: 'status'});
  const form = h('form', {id: 'signin-form', method: 'post', autocomplete: 'off', onsubmit: async (ev) => {
    ev.preventDefault();
    const clientID = id.value.trim();
    const typed = secret.value;
    secret.value = '';
    submit.disabled = true;
    replace(status, 'Signing in…');
    try {
      await signInBuiltin(clientID, typed);
    } catch (e) {
      submit.disabled = false;
      replace(status, errorBox(e, 'Sign-in'));
      secret.focus();
      return;
    }
    done();
  }},
  h('label', {for: 'signin-client-id'}, 'Client id'), id,
  h('label', {for: 'signin-secret'}, 'Client secret'), secret,
  h('div', {class: 'actions'}, submit), status);
  return section(both ? 'Or sign in as a service principal' : 'Service principal', 'signin-builtin',
    h('p', {class: 'muted'}, 'The client id and secret of a built-in principal (catalog principal create, or Service principals here). ' +
      'The token lives in this page only: reloading or closing it signs you out.'),
    form);
}
