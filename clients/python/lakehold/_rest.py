"""HTTP session to a Lakehold (Iceberg REST) catalog.

Takes the properties a PyIceberg REST catalog takes (``uri``, ``warehouse``,
``credential``, ``token``, ``oauth2-server-uri``, ``scope``, ``header.*``,
``ssl.*``), resolves the warehouse prefix through ``/v1/config`` and signs
every request. It always says that it reads v4 column files
(``X-Iceberg-Column-Files: true``) and wants vended storage credentials.
"""

from __future__ import annotations

import threading
import time
from typing import Any
from urllib.parse import quote

import requests

from . import errors

COLUMN_FILES_HEADER = "X-Iceberg-Column-Files"
DELEGATION_HEADER = "X-Iceberg-Access-Delegation"

# Refresh an OAuth2 token this long before the server says it expires, so a
# request never leaves with a token that dies on the way.
_EXPIRY_MARGIN_S = 60.0


class RestSession:
    """A signed HTTP session bound to one warehouse of a catalog.

    Construction calls ``/v1/config`` (and the token endpoint when a
    ``credential`` is given); it raises :class:`errors.LakeholdError`
    subclasses when the catalog refuses or cannot be reached.
    ``properties`` after construction are the catalog's defaults, then the
    caller's, then the catalog's overrides, as PyIceberg merges them.
    """

    def __init__(self, properties: dict[str, str], *, direct: bool = False) -> None:
        """``direct``: ignore proxies (and other settings) from the
        environment, for a catalog on loopback that this process started."""
        uri = properties.get("uri")
        if not uri:
            raise errors.LakeholdError("catalog property 'uri' is required")
        self.uri = uri.rstrip("/")
        self._given = dict(properties)
        self._lock = threading.Lock()
        self._token: str | None = properties.get("token") or None
        self._token_expires: float | None = None
        self.timeout = float(properties.get("timeout", "120"))
        self.http = requests.Session()
        self.http.trust_env = not direct
        self._configure_tls(properties)
        for key, value in properties.items():
            if key.startswith("header."):
                self.http.headers[key[len("header."):]] = value
        self.http.headers[COLUMN_FILES_HEADER] = "true"
        self.http.headers[DELEGATION_HEADER] = "vended-credentials"
        if properties.get("credential"):
            self._fetch_token()
        self.properties = self._load_config()
        prefix = self.properties.get("prefix", "")
        self.prefix = "/".join(quote(p, safe="") for p in prefix.strip("/").split("/")) if prefix else ""

    def _configure_tls(self, p: dict[str, str]) -> None:
        # Passed on every request too: requests lets REQUESTS_CA_BUNDLE and
        # CURL_CA_BUNDLE override a session's verify (psf/requests#3829).
        self._verify: str | bool = p.get("ssl.cabundle") or True
        if p.get("ssl.cabundle"):
            self.http.verify = p["ssl.cabundle"]
        if p.get("ssl.client.cert"):
            self.http.cert = (p["ssl.client.cert"], p["ssl.client.key"]) if p.get("ssl.client.key") else p["ssl.client.cert"]

    def _load_config(self) -> dict[str, str]:
        params = {"warehouse": self._given["warehouse"]} if self._given.get("warehouse") else None
        body = self._send("GET", f"{self.uri}/v1/config", params=params)
        merged: dict[str, str] = dict(body.get("defaults") or {})
        merged.update(self._given)
        merged.update(body.get("overrides") or {})
        return merged

    # --- authentication ---------------------------------------------------

    def _token_url(self) -> str:
        return self._given.get("oauth2-server-uri") or f"{self.uri}/v1/oauth/tokens"

    def _fetch_token(self) -> None:
        """Exchange the client credential for a bearer token
        (client_credentials grant). Raises NotAuthorizedError when refused;
        the secret never appears in a message."""
        cred = self._given["credential"]
        client_id, _, secret = cred.partition(":") if ":" in cred else ("", "", cred)
        form = {"grant_type": "client_credentials", "client_secret": secret,
                "scope": self._given.get("scope", "catalog")}
        if client_id:
            form["client_id"] = client_id
        try:
            resp = self.http.post(self._token_url(), data=form, timeout=self.timeout,
                                  verify=self._verify if self._verify is not True else None)
        except requests.RequestException as e:
            raise errors.TransportError(f"token endpoint unreachable: {type(e).__name__}") from None
        body = _json(resp)
        if resp.status_code != 200 or not isinstance(body, dict) or "access_token" not in body:
            desc = body.get("error_description") or body.get("error") if isinstance(body, dict) else None
            raise errors.NotAuthorizedError(f"token request refused ({resp.status_code}): {desc or 'no detail'}",
                                            status=resp.status_code)
        self._token = body["access_token"]
        expires_in = body.get("expires_in")
        self._token_expires = time.monotonic() + float(expires_in) if expires_in else None

    def _auth_header(self) -> dict[str, str]:
        with self._lock:
            if (self._given.get("credential") and self._token_expires is not None
                    and time.monotonic() > self._token_expires - _EXPIRY_MARGIN_S):
                self._fetch_token()
            return {"Authorization": f"Bearer {self._token}"} if self._token else {}

    # --- requests ---------------------------------------------------------

    def url(self, path: str) -> str:
        """The absolute URL of ``path`` under ``/v1/{prefix}``."""
        base = f"{self.uri}/v1/{self.prefix}" if self.prefix else f"{self.uri}/v1"
        return f"{base}/{path.lstrip('/')}"

    def request(self, method: str, path: str, json: Any = None, headers: dict[str, str] | None = None,
                *, commit: bool = False, params: dict[str, str] | None = None) -> dict[str, Any]:
        """Send one request to ``path`` (relative to ``/v1/{prefix}``) and
        return the decoded JSON answer (``{}`` when empty).

        Raises the :mod:`lakehold.errors` class the answer maps to;
        TransportError when no answer came. ``commit`` marks a commit, where
        a 5xx other than 503 is CommitStateUnknownError. Not retried here:
        callers that retry reuse an Idempotency-Key.
        """
        return self._send(method, self.url(path), json=json, headers=headers, commit=commit, params=params)

    def _send(self, method: str, url: str, *, json: Any = None, headers: dict[str, str] | None = None,
              commit: bool = False, params: dict[str, str] | None = None) -> dict[str, Any]:
        for attempt in (1, 2):
            hdrs = self._auth_header()
            hdrs.update(headers or {})
            try:
                resp = self.http.request(method, url, json=json, headers=hdrs, params=params, timeout=self.timeout,
                                         verify=self._verify if self._verify is not True else None)
            except requests.RequestException as e:
                # The exception text may hold the URL only; keep just the kind.
                raise errors.TransportError(f"{method} {_path_of(url)}: no answer ({type(e).__name__})") from None
            if resp.status_code in (401, 419) and attempt == 1 and self._given.get("credential"):
                with self._lock:
                    self._fetch_token()
                continue
            break
        body = _json(resp)
        if resp.status_code >= 300:
            raise errors.from_response(resp.status_code, body, commit=commit)
        return body if isinstance(body, dict) else {}


def _json(resp: requests.Response) -> Any:
    if not resp.content:
        return {}
    try:
        return resp.json()
    except ValueError:
        return {}


def _path_of(url: str) -> str:
    rest = url.split("://", 1)[-1]
    return "/" + rest.split("/", 1)[1] if "/" in rest else "/"
