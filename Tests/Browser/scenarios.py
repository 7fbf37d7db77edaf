"""The browser scenarios. Each takes the shared context, asserts what a page's own decoders counted
(or what a Swift client decoded) within deadlines, and returns a one-line summary of its figures."""

import os
import re
import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.wheel_input import ScrollOrigin
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from harness import CheckFailed, field, poll

MIN_FRAMES = 30        # decoded frames that show a show plays (2 s at 15 fps)
MIN_COLOURS = 4        # distinct colours in a 16 x 16 sample of a picture; a blank canvas has 1
COUNTER_GAP_S = 0.3    # between two reads of the test pattern's counter (4-5 frames at 15 fps)


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


def counter_advances(browser, selector, who, png):
    """A Swift host's test pattern decoded in the page: the frame counter in its canvas reads
    (marker and check bits valid) and has grown on a second read at least COUNTER_GAP_S later.
    The canvas is saved as `png` (its own size). Returns "first → second"."""
    def readable(save_as=None):
        read = browser.frame_counter(selector, save_as)
        if read and read["counter"] is None:
            raise CheckFailed(f"{who}: the frame counter in {selector} does not read ({read.get('reason')}): "
                              f"bits {read.get('bits')} at {read.get('width')}x{read.get('height')}")
        return read
    first = poll(f"{who}: a picture to read the frame counter from", lambda: readable(png), 5)
    first_at = time.monotonic()
    print(f"    decoded frame {os.path.basename(first['path'])} ({first['width']}x{first['height']}, "
          f"counter {first['counter']})", flush=True)
    second = poll(f"{who}: a second read of the frame counter {COUNTER_GAP_S:g} s later",
                  lambda: readable() if time.monotonic() - first_at >= COUNTER_GAP_S else None, 5, interval_s=0.05)
    expect(second["counter"] > first["counter"],
           f"{who}: the frame counter did not grow in {COUNTER_GAP_S:g} s: {first['counter']} then {second['counter']}")
    return f"{first['counter']} → {second['counter']}"


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
    counter = counter_advances(browser, ".slide.current .tile.host", f"host {host}", "1-decoded-frame")
    ctx.screenshot(browser, "1-viewer-decodes-swift-host")
    chat_input = browser.driver.find_element(By.ID, "chat-input")
    chat_input.send_keys("hello from a browser")
    browser.driver.find_element(By.ID, "chat-send").click()
    poll("the chat message shown", lambda: "hello from a browser" in browser.snapshot()["chatTexts"], 5)
    audience = poll("the audience count", lambda: browser.snapshot()["audience"], 5)
    user = browser.user(host, "live")
    expect(user["decodeErrors"] == 0, f"decode errors: {user}")
    return (f"{user['framesDecoded']} frames decoded, 0 decode errors, first frame {user['firstFrameMs']} ms "
            f"after join, {user['width']}x{user['height']}, picture of {canvas['distinctColours']} colours, "
            f"frame counter {counter}; chat seen; audience {audience}")


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
        # A keyframe every 2 s (15 fps: one in 30 frames), the first one, and at most one for each
        # keyframe request from the edge.
        allowed = 2 + sent["framesSent"] // 30 + sent["keyframeRequests"]
        expect(sent["keyframesSent"] <= allowed,
               f"the browser host sent {sent['keyframesSent']} keyframes in {sent['framesSent']} frames "
               f"({sent['keyframeRequests']} requested by the edge); at most {allowed} expected")

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
    # The show ends: its room closes, so the swipe feed does not list it. The page goes back to the
    # room list once the room is closed: wait for that, or that late navigation would take the
    # next scenario's page away.
    browser.driver.find_element(By.ID, "end-button").click()
    poll("the host page goes back to the room list after ending the show",
         lambda: (browser.snapshot() or {}).get("page") == "list", 10)
    size = re.search(r"size=(\S+)", first)
    elapsed = re.search(r"elapsed_ms=(\d+)", first)
    return (f"Swift viewer decoded {frames} frames ({size.group(1) if size else '?'}), first frame "
            f"{elapsed.group(1) if elapsed else '?'} ms after join; the page sent {sent.get('framesSent')} frames "
            f"({sent.get('keyframesSent')} keyframes, {sent.get('keyframeRequests')} keyframe requests from the edge, "
            f"{sent.get('encodeErrors', 0)} encode errors); audience {audience}; a Swift caller's call accepted on "
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
        own_counter = counter_advances(browser, ".slide.current .tile.host", f"host {host}", "5-decoded-host")
        peer_counter = counter_advances(browser, guest, f"peer {peer}", "5-decoded-peer")
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
    return (f"both hosts decoded side by side: own {own['framesDecoded']} frames (counter {own_counter}), peer "
            f"{both['framesDecoded']} frames (counter {peer_counter}, first {both['firstFrameMs']} ms after join), "
            f"0 decode errors, peer picture of "
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


def cohost_in_swift_room(ctx):
    """A Swift audience member of a Swift host's room applies for a seat, the host accepts, and it
    goes on stage: the browser viewer of that room shows and decodes both side by side; when the
    seat ends the co-host leaves the page."""
    room, host, guest_uid = ctx.rooms[1], ctx.host_uid(1), 3101
    browser = ctx.viewer
    browser.open(ctx.page(f"room.html?room={room}&uid=5107&name=browser-cohost-fan"))
    decodes(browser, host, frames=5)
    guest = ctx.cluster.client("cohost", "--channel", room, "--uid", str(guest_uid), "--role", "audience",
                               "--room", room, "--cohost")
    seat = None
    try:
        applied = guest.await_line("cohost_applied", 20)
        request = field(applied, "request")
        ctx.cluster.ctl("cohost answer", "--room", room, "--uid", str(host), "--request", request, "--accept", "--json")
        seat = field(guest.await_line("on_stage", 15), "seat")
        tile = f'.slide.current .tile.guest[data-uid="{guest_uid}"]'
        cohost = decodes(browser, guest_uid, deadline_s=15)
        own = decodes(browser, host)
        canvas = picture(browser, tile)
        picture(browser, ".slide.current .tile.host")
        own_counter = counter_advances(browser, ".slide.current .tile.host", f"host {host}", "7-decoded-host")
        guest_counter = counter_advances(browser, tile, f"co-host {guest_uid}", "7-decoded-cohost")
        badge = poll("the co-host badge", lambda: browser.script("return document.querySelector('#interaction-badge').dataset.kind") == "co-host", 5)
        ctx.screenshot(browser, "7-cohost")
        ctx.cluster.ctl("cohost stop", "--room", room, "--uid", str(host), "--seat", seat)
        seat = None
        guest.await_line("off_stage", 10)
        poll("the co-host leaves the page when the seat ends",
             lambda: not browser.script("return !!document.querySelector(arguments[0])", tile), 10)
    finally:
        if seat:  # a failed check must not leave the room with a co-host for the scenarios after it
            try:
                ctx.cluster.ctl("cohost stop", "--room", room, "--uid", str(host), "--seat", seat)
            except CheckFailed:
                pass
        guest.stop()
    return (f"host and co-host decoded side by side: host {own['framesDecoded']} frames (counter {own_counter}), "
            f"co-host {cohost['framesDecoded']} frames (counter {guest_counter}), 0 decode errors, co-host picture of "
            f"{canvas['distinctColours']} colours, badge {bool(badge)}; co-host gone after the seat ended")


DECODE_ERROR_CHECK = """
const done = arguments[arguments.length - 1];
(async () => {
  const { RemoteVideoTrack } = await import('../sdk/media.js');
  // Twelve VP8 frames of a moving picture, keyframes at 0 and 6.
  const canvas = new OffscreenCanvas(160, 120);
  const context = canvas.getContext('2d');
  const chunks = [];
  const encoder = new VideoEncoder({
    output: (chunk) => {
      const data = new Uint8Array(chunk.byteLength);
      chunk.copyTo(data);
      chunks.push({ keyframe: chunk.type === 'key', data, timestamp: chunk.timestamp });
    },
    error: (error) => done({ error: `encoder: ${error}` }),
  });
  encoder.configure({ codec: 'vp8', width: 160, height: 120, bitrate: 200_000, framerate: 15, latencyMode: 'realtime' });
  for (let i = 0; i < 12; i++) {
    context.fillStyle = `hsl(${i * 30}, 80%, 50%)`;
    context.fillRect(0, 0, 160, 120);
    context.fillStyle = '#fff';
    context.fillRect(i * 10, 40, 30, 30);
    const frame = new VideoFrame(canvas, { timestamp: i * 66_667 });
    encoder.encode(frame, { keyFrame: i === 0 || i === 6 });
    frame.close();
  }
  await encoder.flush();
  encoder.close();
  const stats = { framesReceived: 0, keyframesReceived: 0, framesDecoded: 0, decodeErrors: 0, framesDropped: 0, receiveBytes: 0 };
  const track = new RemoteVideoTrack(1, stats, null);
  const feed = (chunk) => track._receive({ keyframe: chunk.keyframe, width: 160, height: 120, captureTimeUs: chunk.timestamp }, chunk.data);
  const until = async (what, test) => {
    const end = performance.now() + 3000;
    while (!test()) {
      if (performance.now() > end) throw new Error(`${what}: ${JSON.stringify(stats)}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };
  chunks.slice(0, 3).forEach(feed);
  await until('3 frames decoded', () => stats.framesDecoded === 3);
  const before = track._decoder;
  // A keyframe that is not VP8 (no start code), then the deltas that followed it.
  feed({ keyframe: true, data: new Uint8Array(200).fill(0).map((_, i) => (i === 0 ? 0x50 : i % 7)), timestamp: 3 * 66_667 });
  chunks.slice(3, 6).forEach(feed);
  await until('the decode error counted', () => stats.decodeErrors >= 1);
  const reset = track._decoder !== before;
  feed(chunks[5]);  // a delta before the next keyframe: skipped
  chunks.slice(6).forEach(feed);
  await until('the frames from the next keyframe on decoded', () => stats.framesDecoded >= 9);
  const keyframes = chunks.filter((chunk) => chunk.keyframe).length;
  track._close();
  return { ...stats, reset, keyframes, chunks: chunks.length };
})().then(done, (error) => done({ error: String(error) }));
"""


def decode_error_recovery(ctx):
    """The SDK's remote video after a frame it cannot decode: counts one error, resets its decoder,
    skips to the next keyframe and decodes from there (VP8 made by the page's own encoder)."""
    browser = ctx.viewer
    if not browser.script("return !!window.showroomTest"):
        browser.open(ctx.page("?uid=5108"))
    result = browser.driver.execute_async_script(DECODE_ERROR_CHECK)
    expect(result and not result.get("error"), f"the check did not run: {result}")
    expect(result["keyframes"] == 2, f"the page's encoder made {result['keyframes']} keyframes, not 2: {result}")
    expect(result["decodeErrors"] == 1, f"one bad frame, {result['decodeErrors']} decode errors counted: {result}")
    expect(result["reset"], f"the decoder was not reset after the error: {result}")
    expect(result["framesDecoded"] == 9, f"decoded {result['framesDecoded']} frames, not 3 before and 6 after: {result}")
    expect(result["framesDropped"] >= 1, f"the delta before the next keyframe was not skipped: {result}")
    dropped = result["framesDropped"]
    return (f"1 decode error counted, the decoder reset, {dropped} frame{'s' if dropped != 1 else ''} skipped to the next keyframe, "
            f"{result['framesDecoded']} of {result['chunks']} frames decoded")


REDIRECT_CHECK = """
const [edges, channel, uid, hostUid, done] = arguments;
(async () => {
  const { ShowroomRTC, tokenProvider, loadConfig } = await import('./common.js');
  const config = await loadConfig();
  const token = await tokenProvider(channel, uid, 'subscriber');
  const out = [];
  for (const url of edges) {
    // One edge given directly (no alternatives): a refusal can only be followed through the cluster.
    const client = ShowroomRTC.createClient({ mode: 'live', edge: [url] });
    await client.setClientRole('audience');
    const record = { given: url };
    try {
      await client.join(config.appId, channel, token, uid);
      record.joined = client._edge?.url;
      const end = performance.now() + 5000;
      while (!client.remoteUsers.some((user) => user.uid === hostUid && user.hasVideo) && performance.now() < end) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await client.subscribe(hostUid, 'video');
      while (!(client.getRemoteVideoStats()[hostUid]?.framesDecoded > 0) && performance.now() < end) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      record.framesDecoded = client.getRemoteVideoStats()[hostUid]?.framesDecoded ?? 0;
    } catch (error) {
      record.error = `${error.code} ${error.message}`;
    } finally {
      await client.leave().catch(() => {});
    }
    out.push(record);
  }
  return out;
})().then(done, (error) => done([{ error: String(error) }]));
"""


def follows_channel_elsewhere(ctx):
    """A join sent to the wrong edge (each edge given directly, in turn): the edge refuses with
    CHANNEL_ELSEWHERE naming the right one by id, and the SDK finds that edge's WebSocket face in
    the cluster status and joins there; both joins end on the same edge and decode the host."""
    edges = ctx.cluster.edge_websockets()
    expect(len(edges) >= 2, f"the cluster has {len(edges)} edges with a WebSocket face; the check needs 2")
    browser = ctx.viewer
    if not browser.script("return !!window.showroomTest"):
        browser.open(ctx.page("?uid=5109"))
    room, host = ctx.rooms[4], ctx.host_uid(4)
    records = browser.driver.execute_async_script(REDIRECT_CHECK, edges, room, 5109, host)
    failed = [r for r in records if r.get("error") or not r.get("framesDecoded")]
    expect(not failed, f"joins through a given edge failed: {records}")
    homes = {r["joined"] for r in records}
    expect(len(homes) == 1, f"the joins ended on different edges: {records}")
    redirected = [r for r in records if r["joined"] != r["given"]]
    expect(redirected, f"no join was redirected: {records}")
    return (f"{len(redirected)} of {len(records)} joins redirected from {', '.join(r['given'] for r in redirected)} to "
            f"{homes.pop()}; each decoded the host")


# Run in this order: the swipe feed must find the browser host's room closed, the call and the PK
# change rooms the swipe visits.
SCENARIOS = [
    ("1", "a browser viewer decodes a Swift host", viewer_decodes_swift_host),
    ("2", "a Swift viewer decodes a browser host", swift_viewer_decodes_browser_host),
    ("3", "a browser viewer swipes through 5 live rooms", swipe_through_rooms),
    ("4", "a browser viewer calls a Swift host (1v1)", call_swift_host),
    ("5", "a PK between two Swift hosts, seen in a browser", pk_between_swift_hosts),
    ("6", "the room list plays previews", room_list_previews),
    ("7", "a Swift audience member goes co-host in a Swift host's room, seen in a browser", cohost_in_swift_room),
    ("8", "the SDK follows a CHANNEL_ELSEWHERE redirect", follows_channel_elsewhere),
    ("9", "the SDK recovers from a decode error", decode_error_recovery),
]
