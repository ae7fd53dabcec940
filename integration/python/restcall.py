"""JSON over HTTP to the catalog under test, for the interop tests that
talk REST directly (management routes, v4 routes, signing)."""
import json
import urllib.error
import urllib.request

# The header by which a client says it reads format version 4 metadata; the
# catalog refuses v4 answers to any other.
V4 = {"X-Iceberg-Column-Files": "true"}


def request(method, url, body=None, headers=None, raise_errors=False):
    """Send body (JSON-encoded when not None) and return (status, response
    headers, decoded JSON body or None when empty). An error status is
    returned like any other unless raise_errors, when urllib's HTTPError
    propagates."""
    req = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, dict(resp.headers), json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as e:
        if raise_errors:
            raise
        return e.code, dict(e.headers), json.loads(e.read() or b"null")
