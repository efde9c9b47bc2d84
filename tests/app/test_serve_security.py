"""Serving safely: the real ``microrelease app`` answers only the Host names it was started for (DNS
rebinding: a foreign Host gets 403 for the page, static files and the websocket), opens websockets from
those origins only, and takes a websocket message as large as a 50 MB upload."""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import re
from urllib.parse import urlsplit

import pytest
from browser_util import IDLE, NO_SESSION_PATH, errors, free_port, log_path, screenshot, served_app
from tornado.httpclient import HTTPClientError, HTTPRequest
from tornado.websocket import websocket_connect

from microrelease.app.cli import main
from microrelease.app.serve import (
    WEBSOCKET_MAX_MESSAGE_BYTES,
    allowed_host,
    host_allowed,
    serve_options,
    served_hosts,
)
from microrelease.app.tabs.data.data_state import MAX_UPLOAD_BYTES
from microrelease.core import InvalidParameterError

LOG = "served_security.log"
STATIC = "/static/js/bokeh.min.js"


@pytest.fixture(scope="module")
def server():
    """``microrelease app`` on 127.0.0.1 and a free port, also answering lab.example.org (any port)."""
    # waiting for a file, not the page: a page takes seconds, and asked again, it piles up
    with served_app("--sample", "samarati", "--allow-host", "lab.example.org", log_name=LOG,
                    wait_path=NO_SESSION_PATH, timeout=300) as (url, _):
        yield urlsplit(url).port


@pytest.fixture
def expected_log_lines() -> list[str]:
    """Substrings of error lines a test provokes on purpose (none unless it says so)."""
    return []


@pytest.fixture(autouse=True)
def _no_server_errors(request, expected_log_lines, no_server_errors):
    """Every test that serves also fails on an error the server logged while it ran."""
    if "server" in request.fixturenames:
        request.getfixturevalue("server")  # up, and its log begun
        no_server_errors(LOG, expected_log_lines)


def get(port: int, path: str, host: str, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    try:
        conn.request("GET", path, headers={"Host": host, **(headers or {})})  # our Host, not the address's
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def upgrade_headers(origin: str) -> dict[str, str]:
    return {"Origin": origin, "Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": base64.b64encode(b"0123456789abcdef").decode(), "Sec-WebSocket-Protocol": "bokeh, x"}


def session_token(port: int, host: str) -> str:
    """The token of a fresh session, read from the page served to ``host``."""
    status, page = get(port, "/", host)
    assert status == 200
    return re.search(rb'"token":"([^"]+)"', page)[1].decode()


async def open_session(port: int, host: str, origin: str):
    """A websocket to the page's session, as a browser at ``origin`` opens it, once the server acknowledged it."""
    token = session_token(port, host)
    ws = await websocket_connect(HTTPRequest(f"ws://127.0.0.1:{port}/ws", headers={"Host": host, "Origin": origin}),
                                 subprotocols=["bokeh", token], max_message_size=2**30)
    assert (await read_message(ws))["msgtype"] == "ACK"
    return ws


async def close(ws) -> None:
    """Close and wait for the server's close frame (a socket left open is a ResourceWarning)."""
    ws.close()
    while await ws.read_message() is not None:
        pass


async def read_message(ws) -> dict | None:
    """The header of the next Bokeh message (its metadata, content and buffers read past); None once closed."""
    header = await ws.read_message()
    if header is None:
        return None
    header = json.loads(header)
    for _ in range(2 + header.get("num_buffers", 0)):
        await ws.read_message()
    return header


# --- which Host headers are answered: unit ------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "[::1]"])
def test_a_loopback_server_answers_the_names_of_this_machine(host):
    assert served_hosts(host, 5077) == ("127.0.0.1:5077", "localhost:5077", "[::1]:5077")


def test_another_address_answers_its_own_name_and_the_extra_ones():
    assert served_hosts("192.168.1.5", 5077, ["lab.example.org", "Proxy.Example.org:443"]) == (
        "192.168.1.5:5077", "lab.example.org:*", "proxy.example.org:443")
    assert served_hosts("0.0.0.0", 80)[:2] == ("0.0.0.0:80", "127.0.0.1:80")  # every interface includes loopback


@pytest.mark.parametrize(("header", "allowed"), [
    ("127.0.0.1:5077", True), ("LOCALHOST:5077", True), ("[::1]:5077", True),
    ("evil.example:5077", False), ("localhost:5078", False), ("localhost", False), ("[::1]", False),
    ("localhost.evil.example:5077", False), ("", False),
    ("lab.example.org", True), ("lab.example.org:8443", True), ("lab.example.org.evil.example", False),
    ("proxy.example.org:443", True), ("proxy.example.org", False),
])
def test_a_host_header_is_allowed_only_when_it_names_a_served_host(header, allowed):
    hosts = served_hosts("127.0.0.1", 5077, ["lab.example.org", "proxy.example.org:443"])
    assert host_allowed(header, hosts) is allowed


def test_a_host_header_without_port_means_port_80():
    assert host_allowed("localhost", served_hosts("127.0.0.1", 80))


@pytest.mark.parametrize("text", ["http://lab.example.org", "", "lab example", "lab.example.org:0", "x:65536",
                                  "*", "lab.example.org/path", "x:", "::1", "[zz::1]:80", "user@lab.example.org"])
def test_a_bad_extra_host_is_refused_naming_the_parameter(text):
    with pytest.raises(InvalidParameterError) as exc:
        allowed_host(text)
    assert exc.value.parameter == "allowed_hosts" and repr(text) in str(exc.value)


def test_the_command_line_refuses_a_bad_allow_host_in_one_line_before_serving(capsys):
    code = main(["app", "--sample", "samarati", "--port", str(free_port()), "--allow-host", "http://lab.example.org"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""  # no URL for a server that never ran
    assert err == ("microrelease: error: --allow-host: 'http://lab.example.org' is not NAME or NAME:PORT as typed in "
                   "a browser's address bar (e.g. lab.example.org, 192.168.1.5:5006 or [::1]:5006)\n")


def test_the_websocket_takes_a_50_mb_upload():
    """The upload travels base64-encoded in one JSON websocket message: 4/3 of the file, plus its envelope."""
    encoded = len(base64.b64encode(bytes(MAX_UPLOAD_BYTES)))
    assert serve_options("127.0.0.1", 5077)["websocket_max_message_size"] == WEBSOCKET_MAX_MESSAGE_BYTES
    assert encoded + 64 * 1024 <= WEBSOCKET_MAX_MESSAGE_BYTES <= encoded + 4 * 2**20  # a margin, a small one
    assert WEBSOCKET_MAX_MESSAGE_BYTES < 100 * 2**20  # Tornado's default max_buffer_size holds the message


# --- the real server -----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", STATIC, "/ws"])
def test_a_foreign_host_gets_403_for_the_page_static_files_and_the_websocket(server, path):
    host = f"evil.example:{server}"  # a rebound name: its Origin matches its Host
    headers = upgrade_headers(f"http://{host}") if path == "/ws" else {"Origin": f"http://{host}"}
    status, body = get(server, path, host, headers)
    assert status == 403 and body.startswith(b"403 Forbidden: this dashboard answers only to the host names")


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "[::1]"])
def test_the_names_of_this_machine_get_the_page_and_static_files(server, name):
    status, page = get(server, "/", f"{name}:{server}")
    assert status == 200 and b"microrelease" in page
    assert get(server, STATIC, f"{name}:{server}")[0] == 200


def test_allow_host_adds_a_name_on_any_port_and_says_so(server):
    for host in ("lab.example.org", "lab.example.org:8443", f"LAB.example.org:{server}"):
        assert get(server, "/", host)[0] == 200, host
    assert get(server, "/", "lab.example.org.evil.example")[0] == 403
    assert (f"answering Host 127.0.0.1:{server}, localhost:{server}, [::1]:{server}, lab.example.org only "
            "(add names with --allow-host NAME[:PORT])") in log_path(LOG).read_text()


def run_async(coroutine):
    """Run ``coroutine`` to its end on a thread of its own: the session's playwright browser, once
    started by another module, holds a running event loop on this thread (asyncio.run would refuse)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


@pytest.mark.parametrize(("host", "origin"), [
    ("[::1]:{port}", "http://[::1]:{port}"),
    # Tornado consults the origin allowlist only when Origin and Host differ, e.g. behind a proxy
    # that rewrites Host: the allowlist must hold every allowed host, in every form
    ("127.0.0.1:{port}", "http://localhost:{port}"), ("127.0.0.1:{port}", "http://[::1]:{port}"),
    ("127.0.0.1:{port}", "https://lab.example.org"),
])
def test_a_websocket_opens_from_every_allowed_host(server, host, origin):
    async def session():
        await close(await open_session(server, host.format(port=server), origin.format(port=server)))

    run_async(session())


def test_a_websocket_from_a_foreign_origin_is_refused(server, expected_log_lines):
    """A page elsewhere (not rebound: its Host is ours, its Origin not) must not drive a session. (A rebound
    page's Origin matches its Host, so Tornado never asks the allowlist: only the Host check stops it.)"""
    expected_log_lines.append("Refusing websocket connection from Origin 'http://evil.example")

    async def session():
        with pytest.raises(HTTPClientError) as exc:
            await open_session(server, f"localhost:{server}", f"http://evil.example:{server}")
        assert exc.value.code == 403

    run_async(session())


def test_a_message_as_large_as_a_50_mb_upload_reaches_the_session(server):
    """Bokeh's default (20 MB) closed the session (1009) for CSVs of ~15 MB."""
    async def patch():
        ws = await open_session(server, f"127.0.0.1:{server}", f"http://127.0.0.1:{server}")
        upload = base64.b64encode(bytes(MAX_UPLOAD_BYTES)).decode()  # a 50 MB file, as FileInput sends it
        for fragment in ({"msgid": "big", "msgtype": "PATCH-DOC"}, {}, {"events": [], "upload": upload}):
            await ws.write_message(json.dumps(fragment))
        while (reply := await read_message(ws)) is not None and reply.get("reqid") != "big":
            pass  # the session's own updates
        await close(ws)
        return reply

    reply = run_async(asyncio.wait_for(patch(), 300))
    assert reply is not None, "the server closed the websocket"
    assert reply["msgtype"] == "OK"


@pytest.mark.browser
@pytest.mark.parametrize("name", ["localhost", "127.0.0.1"])
def test_the_dashboard_works_in_a_browser_at_localhost_and_127_0_0_1(server, page, name):
    page.goto(f"http://{name}:{server}/")
    page.wait_for_function(IDLE)
    page.locator(".bk-tab").first.wait_for()
    screenshot(page, f"served_at_{name.replace('.', '_')}")
    assert not errors(page)


def test_a_page_that_left_mid_update_is_not_logged_as_an_error_but_other_errors_are():
    from tornado.websocket import WebSocketClosedError

    from microrelease.app.serve import quiet_when_a_page_left

    class Loop:
        def __init__(self):
            self.passed_on = []

        def default_exception_handler(self, context):
            self.passed_on.append(context)

    loop = Loop()
    quiet_when_a_page_left(loop, {"message": "Task exception was never retrieved", "exception": WebSocketClosedError()})
    assert loop.passed_on == []
    other = {"message": "Task exception was never retrieved", "exception": ValueError("a bug")}
    quiet_when_a_page_left(loop, other)
    assert loop.passed_on == [other]
