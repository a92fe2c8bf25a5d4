"""What makes the web app install to a phone's home screen: its manifest and service worker.

Both are public, like the static files: a browser fetches a manifest without cookies, and
neither holds a secret. The service worker is served from the root, not ``/static/``, because
a worker controls only the pages under the path it was served from: ``/sw.js`` covers ``/``.

- ``GET /manifest.webmanifest``: name, icons, ``display: standalone``, ``start_url: /``
  (``application/manifest+json``).
- ``GET /sw.js``: the worker (``text/javascript``, ``Service-Worker-Allowed: /``,
  revalidated on every check so a new version of roost replaces the old shell).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response

from roost.faces.api.operations import operation
from roost.faces.api.page import STATIC

MANIFEST = {
    "name": "Roost",
    "short_name": "Roost",
    "description": "Your coding agents' terminals, with what each one is doing.",
    "start_url": "/",
    "scope": "/",
    "display": "standalone",
    "background_color": "#11151c",
    "theme_color": "#11151c",
    "icons": [
        {"src": "/static/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any"},
        {"src": "/static/icon-192.png", "sizes": "192x192", "type": "image/png", "purpose": "any"},
        {"src": "/static/icon-512.png", "sizes": "512x512", "type": "image/png", "purpose": "any"},
    ],
}
NO_CACHE = {"Cache-Control": "no-cache"}


@operation("the web app's manifest", answers={200: ("application/manifest+json", "the manifest")})
async def manifest(_request: Request) -> Response:
    return JSONResponse(MANIFEST, media_type="application/manifest+json", headers=NO_CACHE)


@operation("the web app's service worker", answers={200: ("text/javascript", "the script")})
async def service_worker(_request: Request) -> Response:
    headers = {**NO_CACHE, "Service-Worker-Allowed": "/"}
    return FileResponse(STATIC / "sw.js", media_type="text/javascript", headers=headers)
