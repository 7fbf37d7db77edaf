"""What the browser's servers must refuse, checked from plain HTTP before any page opens: the demo
business server's token endpoints (`showroomctl web`) with hostile queries, and a coordinator's
WebSocket face (`/v1/node`) opened from a page of another origin."""

import base64
import http.client
import json
import os
import urllib.error
import urllib.parse
import urllib.request

from harness import CheckFailed

TIMEOUT_S = 5


def get(url):
    """(status, parsed JSON body or the raw text)."""
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
            status, body = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, body = error.code, error.read()
    try:
        return status, json.loads(body)
    except ValueError:
        return status, body.decode(errors="replace")


def token_server(web):
    """Each hostile query is a 400 with a JSON `code` and `message`; good ones get "007…" tokens.
    Returns a one-line summary."""
    base = web.split("/app/")[0]
    token = lambda **query: f"{base}/api/token?{urllib.parse.urlencode(query)}"
    hostile = {
        "uid=0": token(channel="room-1", uid="0", role="subscriber"),
        "uid=abc": token(channel="room-1", uid="abc", role="subscriber"),
        "uid=99999999999": token(channel="room-1", uid="99999999999", role="subscriber"),
        "no uid": token(channel="room-1", role="subscriber"),
        "channel with a slash": token(channel="room/1", uid="7", role="subscriber"),
        "channel with a newline": token(channel="room\n1", uid="7", role="subscriber"),
        "channel of 200 characters": token(channel="r" * 200, uid="7", role="subscriber"),
        "channel of 65 characters": token(channel="r" * 65, uid="7", role="subscriber"),
        "role=admin": token(channel="room-1", uid="7", role="admin"),
        "login-token without uid": f"{base}/api/login-token",
        "login-token uid=0": f"{base}/api/login-token?uid=0",
    }
    problems = []
    for what, url in hostile.items():
        status, body = get(url)
        if status != 400 or not isinstance(body, dict) or not body.get("code") or not body.get("message"):
            problems.append(f"{what}: {status} {body!r:.200}")
    good = {
        "a subscriber token": token(channel="room-1", uid="7", role="subscriber"),
        "a publisher token": token(channel="room-1", uid="7", role="publisher"),
        # A space is one of a channel name's characters (Names.validateChannel, the SDK's rule too).
        "a channel with a space": token(channel="room 1", uid="7", role="subscriber"),
        "a channel of 64 characters": token(channel="r" * 64, uid="7", role="subscriber"),
        "a wildcard channel": token(channel="", uid="4294967295", role="subscriber"),
        "a login token": f"{base}/api/login-token?uid=7",
    }
    for what, url in good.items():
        status, body = get(url)
        if status != 200 or not isinstance(body, dict) or not str(body.get("token", "")).startswith("007"):
            problems.append(f"{what}: {status} {body!r:.200}")
    if problems:
        raise CheckFailed("the token server: " + "; ".join(problems))
    return f"{len(hostile)} hostile queries refused (400 with code and message), {len(good)} good ones answered with 007 tokens"


def upgrade(ws_url, origin):
    """Sends a WebSocket upgrade to `ws_url` as a page of `origin` would; returns the HTTP status
    (101 when the server takes it)."""
    parts = urllib.parse.urlsplit(ws_url)
    if parts.scheme != "ws":
        raise CheckFailed(f"a coordinator's WebSocket address is not ws://: {ws_url}")
    connection = http.client.HTTPConnection(parts.hostname, parts.port or 80, timeout=TIMEOUT_S)
    try:
        connection.request("GET", parts.path or "/", headers={
            "Host": parts.netloc, "Upgrade": "websocket", "Connection": "Upgrade",
            "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(), "Sec-WebSocket-Version": "13",
            "Origin": origin,
        })
        return connection.getresponse().status
    except OSError as error:  # a server that leaves the request hanging fails here too
        raise CheckFailed(f"{ws_url} with Origin {origin}: no answer ({error})")
    finally:
        connection.close()


def node_origins(web):
    """A coordinator's /v1/node takes the web app's pages and refuses another origin's."""
    base = web.split("/app/")[0]
    status, config = get(f"{base}/api/config")
    coordinators = config.get("coordinators") if isinstance(config, dict) else None
    if status != 200 or not coordinators:
        raise CheckFailed(f"/api/config names no coordinators: {status} {config!r:.200}")
    ws = coordinators[0]
    parts = urllib.parse.urlsplit(base)
    right = f"{parts.scheme}://{parts.netloc}"
    evil = upgrade(ws, "http://evil.example")
    # Refused with a client error, before any WebSocket exists (the HTTP library answers a
    # declined upgrade 400).
    if not isinstance(evil, int) or not 400 <= evil < 500:
        raise CheckFailed(f"{ws} answered a WebSocket from Origin http://evil.example with HTTP {evil}, not a 4xx refusal")
    good = upgrade(ws, right)
    if good != 101:
        raise CheckFailed(f"{ws} refused the web app's own origin {right}: HTTP {good}")
    return f"{ws}: Origin http://evil.example gets {evil}, the web app's {right} gets 101"
