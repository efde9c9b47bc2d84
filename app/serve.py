"""Serving the dashboard: ``microrelease app`` (one fresh Dashboard per browser session)."""

from __future__ import annotations

import errno
import socket
import threading

import panel as pn

from microrelease.app.main import create_app, sample_with_profile
from microrelease.app.tabs.registry import TABS
from microrelease.core import Dataset, InvalidParameterError


def check_can_listen(host: str, port: int) -> None:
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


def serve(*, host: str = "127.0.0.1", port: int = 5006, sample: str = "adult", dataset: Dataset | None = None,
          show: bool = False):
    """Serve the app (one fresh Dashboard per session); prints the URL; blocks until stopped."""
    # No pn.extension() here: outside a notebook it renders CDN resources and flips Panel's global
    # resource mode, and later dynamic components then link their CSS from the CDN.
    # Panel links the CSS of components re-rendered outside a request (watchers, threads) to its
    # CDN; a privacy tool must work offline and call nobody, so point those links at this server.
    import panel.reactive

    check_can_listen(host, port)  # before the URL is printed: a taken port is one line, not a traceback
    panel.reactive.CDN_DIST = f"http://{host}:{port}/static/extensions/panel/"
    print(f"microrelease dashboard: http://{host}:{port}/", flush=True)
    if dataset is None:
        sample_with_profile(sample)  # warm the cache: the first session opens at once

    def warm_tabs() -> None:  # the tabs' shared figures, computed while the server starts
        for tab in TABS:
            if tab.warm is not None:
                tab.warm()

    threading.Thread(target=warm_tabs, name="warm-tabs", daemon=True).start()
    return pn.serve(lambda: create_app(sample, dataset), address=host, port=port, show=show,
                    websocket_origin=[f"{host}:{port}"], title="microrelease", threaded=False)
