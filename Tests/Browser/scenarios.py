"""The browser scenarios. Each takes the shared context, asserts what a page's own decoders counted
(or what a Swift client decoded) within deadlines, and returns a one-line summary of its figures."""

import re

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from harness import CheckFailed, poll

MIN_FRAMES = 30        # decoded frames that show a show plays (2 s at 15 fps)
MIN_COLOURS = 4        # distinct colours in a 16 x 16 sample of a picture; a blank canvas has 1


def expect(condition, message):
    if not condition:
        raise CheckFailed(message)


def decodes(browser, uid, label="live", frames=MIN_FRAMES, deadline_s=20):
    """Waits until the page decoded `frames` of `uid` (label 'live' or 'call'); no decode errors."""
    def probe():
        user = browser.user(uid, label)
        if user and user["decodeErrors"]:
            raise CheckFailed(f"{label} video of {uid}: {user['decodeErrors']} decode errors ({user})")
        return user if user and user["framesDecoded"] >= frames else None
    return poll(f"the page decodes {frames} frames of {uid} ({label})", probe, deadline_s)


def picture(browser, selector, deadline_s=5):
    """The picture in `selector` is not blank (several colours sampled from its canvas)."""
    return poll(f"a picture in {selector}",
                lambda: (lambda c: c if c and c["distinctColours"] >= MIN_COLOURS else None)(browser.canvas(selector)),
                deadline_s)


def touch_swipe(browser, start_y, end_y, x=200, steps=6):
    """A finger dragged from start_y to end_y (touch events from the browser's input layer)."""
    browser.driver.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 1})
    dispatch = lambda kind, points: browser.driver.execute_cdp_cmd("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})
    dispatch("touchStart", [{"x": x, "y": start_y}])
    for i in range(1, steps + 1):
        dispatch("touchMove", [{"x": x, "y": start_y + (end_y - start_y) * i / steps}])
    dispatch("touchEnd", [])


def viewer_decodes_swift_host(ctx):
    """A browser viewer opens a Swift host's room: plays at once, decodes, chats, is counted."""
    room, host = ctx.rooms[1], ctx.host_uid(1)
    browser = ctx.viewer
    browser.open(ctx.page(f"room.html?room={room}&uid=5101&name=browser-viewer-1"))
    user = decodes(browser, host)
    canvas = picture(browser, ".slide.current .tile.host")
    ctx.screenshot(browser, "1-viewer-decodes-swift-host")
    chat_input = browser.driver.find_element(By.ID, "chat-input")
    chat_input.send_keys("hello from a browser")
    browser.driver.find_element(By.ID, "chat-send").click()
    poll("the chat message shown", lambda: "hello from a browser" in browser.snapshot()["chatTexts"], 5)
    audience = poll("the audience count", lambda: browser.snapshot()["audience"], 5)
    user = browser.user(host, "live")
    expect(user["decodeErrors"] == 0, f"decode errors: {user}")
    return (f"{user['framesDecoded']} frames decoded, 0 decode errors, first frame {user['firstFrameMs']} ms "
            f"after join, {user['width']}x{user['height']}, picture of {canvas['distinctColours']} colours; "
            f"chat seen; audience {audience}")


def swift_viewer_decodes_browser_host(ctx):
    """A browser goes live from its (fake) camera; a Swift viewer decodes it. Then a Swift caller
    calls the browser host, who accepts: the show pauses for the viewer while the call lasts and
    plays again after it."""
    browser = ctx.viewer
    browser.open(ctx.page("host.html?uid=4001&name=browser-host&video=320x240x15"))
    browser.driver.find_element(By.ID, "golive-button").click()
    snapshot = poll("the browser host is live, sends video and takes calls",
                    lambda: (lambda s: s if s and s.get("roomId") and (s.get("local") or {}).get("framesSent", 0) >= 5
                             and browser.script("return !!window.showroomTest.acceptingCalls") else None)(browser.snapshot()),
                    20)
    room, channel = snapshot["roomId"], snapshot["channel"]
    viewer = ctx.cluster.client("viewer-of-browser-host", "--channel", channel, "--uid", "4101", "--role", "audience",
                                "--host-uid", "4001", "--room", room)
    caller = None
    try:
        first = viewer.await_line("first_frame", 20)
        poll(f"the Swift viewer decodes {MIN_FRAMES} frames of the browser host",
             lambda: viewer.decoded_frames() >= MIN_FRAMES, 20)
        audience = poll("the host page counts the Swift viewer", lambda: browser.snapshot()["audience"], 10)
        ctx.screenshot(browser, "2-browser-host")
        frames = viewer.decoded_frames()
        sent = browser.snapshot()["local"]

        caller = ctx.cluster.caller("caller-of-browser-host", "--from", "4102", "--to", "4001", "--seconds", "3")
        poll("the incoming call shows on the host page",
             lambda: browser.driver.find_element(By.ID, "incoming-call").is_displayed(), 15)
        browser.driver.find_element(By.ID, "accept-call").click()
        poll("the call connects on the host page", lambda: browser.snapshot()["call"]["state"] == "connected", 15)
        call = decodes(browser, 4102, label="call", frames=15, deadline_s=15)
        viewer.await_line(f"video_state channel={channel} uid=4001 state=stopped", 10)
        ctx.screenshot(browser, "2-browser-host-in-a-call")
        poll("the caller hangs up", lambda: caller.process.poll() is not None, 20)
        expect(caller.process.returncode == 0, f"the Swift caller failed: {' | '.join(caller.lines()[-3:])}")
        poll("the call ends on the host page",
             lambda: browser.snapshot()["call"]["state"] not in ("calling", "connecting", "connected"), 10)
        paused_at = viewer.decoded_frames()
        poll("the Swift viewer decodes the show again after the call",
             lambda: viewer.decoded_frames() >= paused_at + 10, 15)
    finally:
        viewer.stop()
        if caller:
            caller.stop()
    # The show ends: its room closes, so the swipe feed does not list it.
    browser.driver.find_element(By.ID, "end-button").click()
    size = re.search(r"size=(\S+)", first)
    elapsed = re.search(r"elapsed_ms=(\d+)", first)
    return (f"Swift viewer decoded {frames} frames ({size.group(1) if size else '?'}), first frame "
            f"{elapsed.group(1) if elapsed else '?'} ms after join; the page sent {sent.get('framesSent')} frames "
            f"({sent.get('encodeErrors', 0)} encode errors); audience {audience}; a Swift caller's call accepted on "
            f"the page: {call['framesDecoded']} call frames decoded, the show paused for the viewer and played again")


def swipe_through_rooms(ctx):
    """A browser viewer swipes down through five live rooms and back up one (wheel): each shows its
    host's first frame; the swipe → first frame times are the page's own."""
    browser = ctx.viewer
    mine = {ctx.rooms[i]: ctx.host_uid(i) for i in range(1, 6)}
    browser.open(ctx.page(f"room.html?room={ctx.rooms[5]}&uid=5103&name=browser-swiper"))
    seen = {}

    def settled(count):
        """The page made `count` moves and the last one showed its first frame."""
        swipes = browser.snapshot()["swipes"]
        return swipes[-1] if len(swipes) == count and swipes[-1]["firstFrameMs"] is not None else None

    moves = 1
    for _ in range(8):
        record = poll(f"move {moves}: the first frame", lambda: settled(moves), 10)
        if record["roomId"] in mine:
            decodes(browser, mine[record["roomId"]], frames=3, deadline_s=5)
            seen.setdefault(record["roomId"], record)
        if len(seen) == 5:
            break
        ActionChains(browser.driver).send_keys(Keys.ARROW_DOWN).perform()
        moves += 1
    expect(len(seen) == 5, f"visited {len(seen)} of the 5 rooms: {list(seen)}")
    # And back up with the wheel: the room above was prejoined.
    feed = browser.driver.find_element(By.ID, "feed")
    ActionChains(browser.driver).scroll_from_origin(ScrollOrigin.from_element(feed), 0, -120).perform()
    moves += 1
    poll("the wheel swipe back up: its first frame", lambda: settled(moves), 10)
    # And down again with a finger (a phone's way): the touch handler drags the feed and swipes.
    touch_swipe(browser, start_y=600, end_y=300)
    moves += 1
    touched = poll("the touch swipe: its first frame", lambda: settled(moves), 10)
    expect(touched["how"] == "touch", f"the last move was not a touch swipe: {touched}")
    ctx.screenshot(browser, "3-after-swipes")
    users = browser.users("live")
    errors = sum(u["decodeErrors"] for u in users)
    expect(errors == 0, f"decode errors while swiping: {users}")
    records = browser.snapshot()["swipes"]
    by_how = {}
    for record in records[1:]:
        by_how.setdefault(record["how"], []).append(record)
    keys = [r["firstFrameMs"] for r in by_how.get("key", [])]
    listed = lambda how: ", ".join(f"{r['firstFrameMs']} ms" for r in by_how.get(how, []))
    return (f"5 rooms; open → first frame {records[0]['firstFrameMs']} ms; swipe → first frame: keys "
            f"{listed('key')} (median {sorted(keys)[len(keys) // 2]} ms), wheel back up {listed('wheel')}, "
            f"touch {listed('touch')} (from the drag's start: the video starts before the finger lifts); "
            f"loader actual {', '.join(str(r['actualMs']) for r in records[1:])} ms; 0 decode errors")


def call_swift_host(ctx):
    """A browser viewer calls a Swift host (1v1): it connects, the call's video decodes, hang up
    brings the live show back."""
    room, host = ctx.rooms[5], ctx.host_uid(5)
    browser = ctx.viewer
    browser.open(ctx.page(f"room.html?room={room}&uid=5104&name=browser-caller"))
    decodes(browser, host, frames=5)
    browser.driver.find_element(By.ID, "call-button").click()
    poll("the call connects", lambda: browser.snapshot()["call"]["state"] == "connected", 20)
    call = decodes(browser, host, label="call", deadline_s=15)
    picture(browser, "#call-remote")
    ctx.screenshot(browser, "4-in-a-call")
    host_line = ctx.hosts[5].await_line("connected", 10)
    history = browser.snapshot()["call"]["history"]
    live_before = browser.user(host, "live")["framesDecoded"]
    browser.driver.find_element(By.ID, "hangup-button").click()
    poll("the call ends on the page",
         lambda: browser.snapshot()["call"]["state"] not in ("calling", "connecting", "connected")
         and not browser.driver.find_element(By.ID, "call-view").is_displayed(), 10)
    ctx.hosts[5].await_line("disconnected", 10)
    resumed = poll("the live show plays again after the call",
                   lambda: (lambda u: u if u and u["framesDecoded"] >= live_before + 15 else None)(browser.user(host, "live")),
                   15)
    expect(resumed["decodeErrors"] == 0, f"decode errors in the live show: {resumed}")
    call = browser.user(host, "call")
    return (f"connected ({' → '.join(dict.fromkeys(history))}); call video {call['framesDecoded']} frames, "
            f"{call['decodeErrors']} decode errors, first frame {call['firstFrameMs']} ms after the call's join; "
            f"host: {host_line.split(' channel=')[0]}; hung up, live show decodes again "
            f"({resumed['framesDecoded'] - live_before} more frames)")


def pk_between_swift_hosts(ctx):
    """Two Swift hosts' rooms go into a PK while a browser watches one: the page shows and decodes
    both hosts side by side; when the PK stops the peer goes away."""
    room, peer_room = ctx.rooms[2], ctx.rooms[3]
    host, peer = ctx.host_uid(2), ctx.host_uid(3)
    browser = ctx.viewer
    browser.open(ctx.page(f"room.html?room={room}&uid=5105&name=browser-pk-fan"))
    decodes(browser, host, frames=5)
    invitation = ctx.cluster.ctl("pk invite", "--room", room, "--uid", str(host), "--peer", peer_room, "--json")
    invitation_id = re.search(r'"request":\{[^}]*"id":"([^"]+)"', invitation)
    expect(invitation_id, f"pk invite printed no request id: {invitation}")
    answer = ctx.cluster.ctl("pk answer", "--room", peer_room, "--uid", str(peer), "--invitation",
                             invitation_id.group(1), "--accept", "--json")
    pk_id = re.search(r'"interactionId":"([^"]+)"', answer)
    expect(pk_id, f"pk answer printed no interaction id: {answer}")
    stopped = False
    try:
        both = decodes(browser, peer, deadline_s=15)
        own = decodes(browser, host)
        guest = f'.slide.current .tile.guest[data-uid="{peer}"]'
        canvas = picture(browser, guest)
        picture(browser, ".slide.current .tile.host")
        badge = poll("the PK badge", lambda: browser.script("return document.querySelector('#interaction-badge').dataset.kind") == "pk", 5)
        ctx.screenshot(browser, "5-pk")
        ctx.cluster.ctl("pk stop", "--room", room, "--uid", str(host), "--pk", pk_id.group(1))
        stopped = True
        poll("the peer leaves the page when the PK stops",
             lambda: not browser.script("return !!document.querySelector(arguments[0])", guest), 10)
    finally:
        # A failed check must not leave the rooms in a PK for the scenarios after it.
        if not stopped:
            try:
                ctx.cluster.ctl("pk stop", "--room", room, "--uid", str(host), "--pk", pk_id.group(1))
            except CheckFailed:
                pass
    return (f"both hosts decoded side by side: own {own['framesDecoded']} frames, peer {both['framesDecoded']} "
            f"frames (first {both['firstFrameMs']} ms after join), 0 decode errors, peer picture of "
            f"{canvas['distinctColours']} colours, PK badge {bool(badge)}; peer gone after stop")


def room_list_previews(ctx):
    """The room list plays small muted previews of the rooms on screen."""
    browser = ctx.viewer
    browser.open(ctx.page("?uid=5106"))
    cards = poll("cards with a first frame",
                 lambda: (lambda n: n if n >= 2 else None)(browser.script(
                     "return document.querySelectorAll('.card[data-first-frame-ms]').length")), 15)
    ctx.screenshot(browser, "6-room-list")
    users = browser.users("preview")
    errors = sum(u["decodeErrors"] for u in users)
    expect(errors == 0, f"decode errors in previews: {users}")
    return f"{cards} cards playing, {sum(u['framesDecoded'] for u in users)} preview frames decoded, 0 errors"


# Run in this order: the swipe feed must find the browser host's room closed, the call and the PK
# change rooms the swipe visits.
SCENARIOS = [
    ("1", "a browser viewer decodes a Swift host", viewer_decodes_swift_host),
    ("2", "a Swift viewer decodes a browser host", swift_viewer_decodes_browser_host),
    ("3", "a browser viewer swipes through 5 live rooms", swipe_through_rooms),
    ("4", "a browser viewer calls a Swift host (1v1)", call_swift_host),
    ("5", "a PK between two Swift hosts, seen in a browser", pk_between_swift_hosts),
    ("6", "the room list plays previews", room_list_previews),
]
