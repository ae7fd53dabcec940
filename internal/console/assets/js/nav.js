// Hash routes: #/w/<warehouse>/n/<levels joined by %1F>/t/<table> (or
// /v/<view>, /f/<function>), and #/admin/principals, #/admin/roles[/<role>],
// #/admin/audit for access control, #/admin/jobs for background jobs. Hash routing needs no server fallback and keeps the back
// button and links working.

// href builds the link for {wh, ns, t, v, f} or {admin, role}.
export function href({wh, ns, t, v, f, admin, role}) {
  if (admin) return `#/admin/${admin}` + (role ? '/' + encodeURIComponent(role) : '');
  let s = '#/';
  if (wh) s += 'w/' + encodeURIComponent(wh);
  if (ns && ns.length) s += '/n/' + ns.map(encodeURIComponent).join('%1F');
  if (t) s += '/t/' + encodeURIComponent(t);
  if (v) s += '/v/' + encodeURIComponent(v);
  if (f) s += '/f/' + encodeURIComponent(f);
  return s;
}

// parse reads the current hash back into {wh, ns, t, v, f} or {admin, role}.
export function parse(hash) {
  const seg = hash.replace(/^#\/?/, '').split('/').filter(Boolean);
  const out = {ns: []};
  if (seg[0] === 'admin') {
    out.admin = seg[1] || 'roles';
    if (out.admin === 'roles' && seg[2]) out.role = decodeURIComponent(seg[2]);
    return out;
  }
  for (let i = 0; i + 1 < seg.length; i += 2) {
    const v = seg[i + 1];
    if (seg[i] === 'w') out.wh = decodeURIComponent(v);
    else if (seg[i] === 'n') out.ns = v.split('%1F').map(decodeURIComponent);
    else if (seg[i] === 't') out.t = decodeURIComponent(v);
    else if (seg[i] === 'v') out.v = decodeURIComponent(v);
    else if (seg[i] === 'f') out.f = decodeURIComponent(v);
  }
  return out;
}

// go navigates to a route; reload re-renders even when it is the current
// one (after a change).
export function go(route, reload) {
  const target = href(route);
  if (location.hash === target && reload) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = target;
}
