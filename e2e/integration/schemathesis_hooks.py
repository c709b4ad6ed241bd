"""Schemathesis hooks for the OpenAPI conformance run against a real server.

Loaded through the environment: `SCHEMATHESIS_HOOKS=schemathesis_hooks` with this directory on
`PYTHONPATH` (or `SCHEMATHESIS_HOOKS=/path/to/schemathesis_hooks.py`); schemathesis 4.x has no
`--hooks` option.

They drop exactly the failures that two documented limits of libwebsockets, the HTTP library below
Atrium, cause (docs/admin-api.md, "Known limits of the HTTP layer"), and nothing else:

1. A CR or LF in the URL: lws cuts the URL there. In a query value it cuts the value and drops the
   parameters after it; in a path parameter it cuts the path, so the request may reach another
   route (`POST .../participants/a%0Ab/tracks/t/mute` is `POST .../participants/a`, a 405). Either
   way the server answers another request than the one schemathesis generated. Every failure of a
   request whose URL, as sent, holds `%0A` or `%0D` is dropped, except a 5xx: truncation never
   explains a server error.
2. lws's own `403 Forbidden` page (`text/html`), sent without involving Atrium for a method lws does
   not parse (TRACE, QUERY, ...) or a malformed percent-escape. Atrium never answers `text/html`, so
   the page is recognised by its status, media type and body.
"""
import re

import schemathesis

LWS_403_MARKER = b"<h1>403</h1>"


# WHIP's bodies are text: an SDP offer (`application/sdp`) and ICE fragments
# (`application/trickle-ice-sdpfrag`).
@schemathesis.serializer("application/sdp", "application/trickle-ice-sdpfrag")
def _text_body(ctx, value):
    return value.encode() if isinstance(value, str) else str(value).encode()


# A CR or LF byte, percent-encoded, in the URL as sent. In an encoded URL `%` only starts an escape,
# so this cannot match inside another escape (`%250A` is the text "%0A", which lws leaves alone).
ENCODED_CR_OR_LF = re.compile(r"%0[AaDd]")


def _url_has_cr_or_lf(response):
    url = getattr(getattr(response, "request", None), "url", None) or ""
    return ENCODED_CR_OR_LF.search(url) is not None


def _is_lws_403_page(response):
    if response is None or response.status_code != 403:
        return False
    content_type = response.headers.get("content-type") or []
    if isinstance(content_type, str):
        content_type = [content_type]
    if not any(v.split(";")[0].strip().lower() == "text/html" for v in content_type):
        return False
    return LWS_403_MARKER in (response.content or b"")


@schemathesis.hook
def filter_failure(ctx, failure, case, response):
    """True keeps the failure; False drops it."""
    if _is_lws_403_page(response):
        return False
    if _url_has_cr_or_lf(response) and response.status_code < 500:
        return False
    return True
