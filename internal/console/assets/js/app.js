// The console's entry point: sign-in state, breadcrumbs and the router.
import {h, replace, errorBox} from './dom.js';
import {setAuthOn, newPage, can, forgetPrivileges} from './api.js';
import {initAuth, signIn, signOut, signedIn, onSessionEnd} from './auth.js';
import {signInPage} from './signin.js';
import {href, parse} from './nav.js';
import {warehousesPage, namespacePage} from './browse.js';
import {tablePage} from './table.js';
import {viewPage} from './view.js';
import {functionPage} from './function.js';
import {principalsPage, rolesPage, rolePage, auditPage} from './access.js';
import {jobsPage} from './jobs.js';

const ADMIN = {principals: 'Service principals', roles: 'Roles', audit: 'Audit log', jobs: 'Background jobs'};

const main = document.getElementById('main');
let config = {auth: null};
let ended = null; // why the last built-in session ended, shown on the sign-in page

function crumbs(r) {
  const parts = [h('a', {href: '#/'}, 'Warehouses')];
  if (r.admin) {
    parts.length = 0;
    parts.push(h('a', {href: href({admin: r.admin})}, ADMIN[r.admin] || r.admin));
    if (r.role) parts.push(h('a', {href: href(r)}, r.role));
  }
  if (r.wh) parts.push(h('a', {href: href({wh: r.wh})}, r.wh));
  r.ns.forEach((_, i) => parts.push(h('a', {href: href({wh: r.wh, ns: r.ns.slice(0, i + 1)})}, r.ns[i])));
  if (r.t) parts.push(h('a', {href: href(r)}, r.t));
  if (r.v) parts.push(h('a', {href: href(r)}, r.v));
  if (r.f) parts.push(h('a', {href: href(r)}, r.f));
  parts[parts.length - 1].setAttribute('aria-current', 'page');
  replace(document.getElementById('crumbs'), h('ol', {}, parts.map((p) => h('li', {}, p))));
}

function who() {
  const box = document.getElementById('who');
  if (!config.auth) return replace(box, h('span', {class: 'muted'}, 'Authentication off'));
  if (signedIn()) {
    return replace(box, h('button', {type: 'button', class: 'small', onclick: () => { signOut(); location.reload(); }}, 'Sign out'));
  }
  if (!config.auth.issuer) return replace(box); // the page itself is the sign-in form
  replace(box, h('button', {type: 'button', class: 'small', onclick: () => signIn().catch((e) => replace(main, errorBox(e, 'Sign-in')))}, 'Sign in'));
}

// accessLinks offers the access-control pages to those who may manage
// grants (everyone with authentication off).
async function accessLinks() {
  const nav = document.getElementById('sections');
  if (!(await can('manage-grants', {kind: 'server'}))) return replace(nav);
  replace(nav, h('ul', {}, Object.entries(ADMIN).map(([k, label]) => h('li', {}, h('a', {href: href({admin: k})}, label)))));
}

async function route() {
  const r = parse(location.hash);
  newPage();
  crumbs(r);
  who();
  if (config.auth && !signedIn()) {
    signInPage(main, config.auth, () => {
      ended = null;
      forgetPrivileges(); // someone else may have signed in
      route();
    }, ended);
    return;
  }
  document.title = [r.t || r.v || r.f || r.role || ADMIN[r.admin], r.ns.join('.'), r.wh, 'Lakehold console'].filter(Boolean).join(' · ');
  accessLinks();
  // Each render gets its own box: a slow answer for a page the person
  // already left lands in a detached box and is never seen.
  const box = h('div', {class: 'page'});
  replace(main, box);
  let page;
  if (r.admin === 'principals') page = principalsPage(box);
  else if (r.admin === 'audit') page = auditPage(box);
  else if (r.admin === 'jobs') page = jobsPage(box);
  else if (r.admin) page = r.role ? rolePage(box, r.role) : rolesPage(box);
  else if (r.wh && r.t) page = tablePage(box, r.wh, r.ns, r.t);
  else if (r.wh && r.v) page = viewPage(box, r.wh, r.ns, r.v);
  else if (r.wh && r.f) page = functionPage(box, r.wh, r.ns, r.f);
  else if (r.wh) page = namespacePage(box, r.wh, r.ns);
  else page = warehousesPage(box);
  await page;
  // Move focus to the new page's heading so keyboard and screen-reader
  // users start there, as after a full page load.
  const h1 = box.querySelector('h1');
  if (h1 && document.activeElement === document.body) h1.focus({preventScroll: true});
}

async function start() {
  try {
    config = await initAuth();
  } catch (e) {
    replace(main, errorBox(e, 'Sign-in'));
    return;
  }
  setAuthOn(!!config.auth);
  // A built-in token that could not be renewed: back to the sign-in page.
  onSessionEnd((e) => { ended = e; route(); });
  window.addEventListener('hashchange', () => { document.activeElement?.blur?.(); route(); });
  route();
}

start();
