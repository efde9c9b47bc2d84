"""Serving the dashboard: ``microrelease app`` (one fresh Dashboard per browser session), only to the
host names it was started for."""

from __future__ import annotations

import errno
import gc
import ipaddress
import logging
import re
import socket
from collections.abc import Collection, Sequence
from typing import Any

import panel as pn
import panel.reactive
from tornado.httputil import HTTPServerRequest
from tornado.iostream import StreamClosedError
from tornado.routing import Matcher, Rule
from tornado.web import RequestHandler
from tornado.websocket import WebSocketClosedError

from microrelease.app.cli.flags import FLAGS
from microrelease.app.main import create_app, warm_sample
from microrelease.app.tabs.data.data_state import MAX_UPLOAD_BYTES
from microrelease.app.tabs.tab_registry import TABS, warm_figures
from microrelease.app.warm_up import WarmUp
from microrelease.core import Dataset, InvalidParameterError

log = logging.getLogger(__name__)

LOOPBACK = ("127.0.0.1", "localhost", "[::1]")  # the names a browser on this machine reaches it by
EVERY_INTERFACE = ("0.0.0.0", "[::]", "")  # listening there includes the loopback
# An upload reaches the server base64-encoded (4 bytes per 3) in one websocket message; 1 MiB more
# holds that message's JSON envelope and the file name. Bokeh's default (20 MB) cut uploads at ~15 MB.
WEBSOCKET_MAX_MESSAGE_BYTES = 4 * -(-MAX_UPLOAD_BYTES // 3) + 2**20
_HOST = re.compile(r"(?P<name>\[[0-9a-f:.]+\]|[a-z0-9_-]+(?:\.[a-z0-9_-]+)*)(?::(?P<port>\d{1,5}))?")


def validate_listen_address(host: str, port: int) -> None:
    """Refuse a port out of range, an unknown host, or an address something already listens on, by
    binding (as the server will: every address of ``host``, SO_REUSEADDR) and letting go at once."""
    if not 1 <= port <= 65535:
        raise InvalidParameterError(f"The 'port' parameter must be from 1 to 65535. Got {port} instead.",
                                    parameter="port")
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise InvalidParameterError(f"cannot listen on host {host!r}: {exc.strerror}", parameter="host") from None
    for family, kind, proto, _, address in addresses:
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(address)
            except OSError as exc:
                if exc.errno == errno.EADDRNOTAVAIL and family == socket.AF_INET6:
                    continue  # no IPv6 here; the server skips that address of "localhost" too
                raise InvalidParameterError(f"cannot listen on {host}:{port}: {exc.strerror} (choose another port)",
                                            parameter="port") from None


# --- which Host headers are answered ---------------------------------------------------------------
# DNS rebinding: a page of evil.example whose name is then pointed at 127.0.0.1 reaches this server as
# "same origin", with a matching Origin; only its Host header (evil.example:PORT) gives it away.


def allowed_host(text: str) -> str:
    """One extra host, NAME or NAME:PORT, as the pattern 'name:port', or 'name:*' without a port: behind a
    proxy the Host header carries the proxy's port, or none."""
    match = _HOST.fullmatch(text.strip().lower())
    if match and match["name"].startswith("["):
        try:
            ipaddress.IPv6Address(match["name"][1:-1])
        except ValueError:
            match = None
    if not match or (match["port"] is not None and not 1 <= int(match["port"]) <= 65535):
        raise InvalidParameterError(f"{text!r} is not NAME or NAME:PORT as typed in a browser's address bar "
                                    "(e.g. lab.example.org, 192.168.1.5:5006 or [::1]:5006)",
                                    parameter="allowed_hosts")
    return f"{match['name']}:{int(match['port']) if match['port'] else '*'}"


def served_hosts(host: str, port: int, extra: Sequence[str] = ()) -> tuple[str, ...]:
    """The Host headers answered, as 'name:port' (or 'name:*') patterns: the listening address, the
    loopback names when it listens there, then ``extra``."""
    name = host.strip().lower()
    name = f"[{name.strip('[]')}]" if ":" in name else name
    local = name in LOOPBACK or name in EVERY_INTERFACE
    names = ([name] if name and name not in LOOPBACK else []) + (list(LOOPBACK) if local else [])
    return tuple(dict.fromkeys([f"{n}:{port}" for n in names] + [allowed_host(e) for e in extra]))


def host_allowed(host_header: str, allowed: Collection[str]) -> bool:
    """Does a request's Host header match one of the ``allowed`` patterns? No port in it means 80 (HTTP's)."""
    name, sep, port = host_header.strip().lower().rpartition(":")
    if not sep or not port.isdigit() or (name.startswith("[") and not name.endswith("]")):
        name, port = host_header.strip().lower(), "80"  # "[::1]" and "localhost" have no port
    return f"{name}:{int(port)}" in allowed or f"{name}:*" in allowed


class _ForeignHost(Matcher):
    """Matches a request whose Host header is not one of the allowed hosts."""

    def __init__(self, allowed: Collection[str]) -> None:
        self.allowed = frozenset(allowed)

    def match(self, request: HTTPServerRequest) -> dict[str, Any] | None:
        return None if host_allowed(request.host, self.allowed) else {}


class _RefuseHost(RequestHandler):
    """403 before anything runs: no session, no file, no websocket."""

    def prepare(self) -> None:
        log.warning("refused a request for Host %r: add it with %s if it is this server's name",
                    self.request.host, FLAGS["allowed_hosts"])
        self.set_status(403)
        self.set_header("Content-Type", "text/plain; charset=utf-8")
        self.finish("403 Forbidden: this dashboard answers only to the host names it was started for.\n")


def admit_only(server: Any, allowed: Collection[str]) -> None:
    """Refuse (403) every request to ``server`` whose Host is not ``allowed`` (the page, static files and
    the websocket alike), and let websockets open from exactly those origins."""
    app = server._tornado  # Bokeh's Tornado Application; its default router sees every request first
    app.default_router.rules.insert(0, Rule(_ForeignHost(allowed), _RefuseHost))
    app.websocket_origins.clear()  # Bokeh's own parser refuses "[::1]:P" and "name:*"; its matcher takes them
    app.websocket_origins.update(allowed)


def serve_options(host: str, port: int) -> dict[str, Any]:
    """Keyword arguments of ``pn.serve`` (the server is started once ``admit_only`` has guarded it).
    No ``pn.state.location``: the app reads no URL, and Panel's parser of it fails on "Host: [::1]:PORT"."""
    return dict(address=host, port=port, title="microrelease", threaded=False, start=False, location=False,
                websocket_max_message_size=WEBSOCKET_MAX_MESSAGE_BYTES)


def warm_tabs(tabs: Sequence = TABS) -> WarmUp:
    """Off the first page's path: once a session's page is ready in the browser, one child process at
    the lowest priority compiles the numba kernels and computes the figures the ``tabs`` share (see
    ``WarmUp``); a tab opened before that computes its own. Registered
    before the server starts, so that the first session is not missed."""
    warm_up = WarmUp([tab.name for tab in tabs if tab.warm is not None], warm_figures)
    pn.state.on_session_created(lambda _context: pn.state.onload(warm_up.start))
    return warm_up


def quiet_when_a_page_left(loop, context: dict) -> None:
    """The event loop's handler of errors nobody awaited: a page closed while the server was still
    sending it an update is a page gone, not an error (one line at debug level); anything else goes to
    asyncio's own handler (an ERROR in the log, as before)."""

    if isinstance(context.get("exception"), WebSocketClosedError | StreamClosedError):
        logging.getLogger(__name__).debug("a page closed while an update was on its way: %s", context.get("message"))
        return
    loop.default_exception_handler(context)


def serve(*, host: str = "127.0.0.1", port: int = 5006, sample: str = "adult", dataset: Dataset | None = None,
          show: bool = False, allowed_hosts: Sequence[str] = (), population=None):
    """Serve the app (one fresh Dashboard per session) to the Host names ``served_hosts`` lists; prints the
    URL; blocks until stopped. ``population``: a PopulationTable for k-map (microrelease.app.explorer.population)."""
    # No pn.extension() here: outside a notebook it renders CDN resources and flips Panel's global
    # resource mode, and later dynamic components then link their CSS from the CDN.
    # Panel links the CSS of components re-rendered outside a request (watchers, threads) to its
    # CDN; a privacy tool must work offline and call nobody, so point those links at this server.

    hosts = served_hosts(host, port, allowed_hosts)  # like a taken port: one line before the URL
    validate_listen_address(host, port)  # before the URL is printed: a taken port is one line, not a traceback
    address = f"[{host}]" if ":" in host else host
    panel.reactive.CDN_DIST = f"http://{address}:{port}/static/extensions/panel/"
    print(f"microrelease dashboard: http://{address}:{port}/", flush=True)
    if allowed_hosts or hosts[0].rsplit(":", 1)[0] not in LOOPBACK:
        # reached from elsewhere: say which names work, and how to add the one others will type
        print(f"answering Host {', '.join(h.removesuffix(':*') for h in hosts)} only "
              f"(add names with {FLAGS['allowed_hosts']} NAME[:PORT])", flush=True)
    if dataset is None:
        warm_sample(sample)  # read, profiled (or a large one's opening question answered): the first session opens at once
    warm_tabs()
    # What is loaded by now lives as long as the server: out of the collector's sight, a full collection
    # takes ~10 ms instead of ~120 ms on adult, a pause a k change would otherwise wait on now and then.
    gc.freeze()
    server = pn.serve(lambda: create_app(sample, dataset, population), show=show, **serve_options(host, port))
    admit_only(server, hosts)
    server.io_loop.asyncio_loop.set_exception_handler(quiet_when_a_page_left)
    server.start()
    server.io_loop.start()  # until Ctrl-C or SIGTERM
    return server
