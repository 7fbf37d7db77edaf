"""What the browser scenarios share: the local cluster (its run directory), synthetic Swift clients
(`showroomctl client`), Chromium driven by Selenium, and polling with deadlines.

Every wait polls something observable (a page's counters, a client's output) until a deadline; no
sleep stands in for an event. Every process started here is recorded by pid in `<out>/pids` so the
shell script that runs the scenarios can stop it even when this process dies first.
"""

import base64
import glob
import json
import os
import re
import subprocess
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "barcode.js")) as _file:
    BARCODE_READER = _file.read()


class CheckFailed(AssertionError):
    """A scenario's expectation that did not hold; the message says what was seen."""


def poll(what, probe, deadline_s, interval_s=0.1):
    """Calls `probe` until it returns something truthy and returns that; fails after `deadline_s`
    naming `what` and the last value seen."""
    end = time.monotonic() + deadline_s
    last = None
    while True:
        try:
            last = probe()
        except CheckFailed:
            raise
        except Exception as error:  # a page between navigations, a client not started yet
            last = error
        if last and not isinstance(last, Exception):
            return last
        if time.monotonic() >= end:
            raise CheckFailed(f"{what}: not within {deadline_s:g} s (last seen: {describe(last)})")
        time.sleep(interval_s)


def describe(value, limit=600):
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + " …"


class Processes:
    """Pids of everything started, written down at once for the shell's trap."""

    def __init__(self, out_dir):
        self.path = os.path.join(out_dir, "pids")
        self.pids = []

    def add(self, pid):
        self.pids.append(pid)
        with open(self.path, "a") as file:
            file.write(f"{pid}\n")


class Cluster:
    """A cluster started by `deploy/cluster.sh up` in `run_dir`."""

    def __init__(self, root, run_dir, bin_dir, out_dir, processes):
        self.root = root
        self.run_dir = run_dir
        self.bin_dir = bin_dir
        self.out_dir = out_dir
        self.processes = processes
        self.env = dict(os.environ, SHOWROOM_RUN_DIR=run_dir)
        keys = os.path.join(run_dir, "keys")
        if os.path.exists(os.path.join(keys, "cluster.key")):
            self.env["SHOWROOM_KEYRING"] = keys

    def _ready_field(self, pattern, field):
        values = []
        for path in sorted(glob.glob(os.path.join(self.run_dir, pattern))):
            with open(path) as file:
                for line in file:
                    match = re.search(rf"^ready .*\b{field}=(\S+)", line)
                    if match:
                        values.append(match.group(1))
                        break
        return values

    def client_seeds(self):
        """The coordinators' client endpoints (what the SDK is given)."""
        return self._ready_field("coordinator-*.out", "client")

    def edge_websockets(self):
        """The edges' WebSocket faces (ws://…/v1/edge)."""
        return self._ready_field("edge-*.out", "ws")

    def cluster_seeds(self):
        """Every member's cluster endpoint (operator commands, with the keyring)."""
        return self._ready_field("*.out", "endpoint")

    def ctl(self, command, *args, timeout=20):
        """Runs an operator command (`"pk invite"`, `"rooms create"` …) against the cluster, with
        its members as seeds and the operator's keys; returns its standard output."""
        seeds = [flag for seed in self.cluster_seeds() for flag in ("--seed", seed)]
        argv = [os.path.join(self.bin_dir, "showroomctl"), *command.split(), *seeds, *args]
        result = subprocess.run(argv, env=self.env, capture_output=True, text=True, timeout=timeout,
                                stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise CheckFailed(f"showroomctl {command} failed: {result.stderr.strip() or result.stdout.strip()}")
        return result.stdout

    def create_room(self, name, owner, owner_name):
        out = json.loads(self.ctl("rooms create", "--json", "--name", name, "--owner", str(owner),
                                  "--owner-name", owner_name))
        room = out.get("roomId") or out.get("room", {}).get("roomId")
        if not room:
            raise CheckFailed(f"rooms create printed no roomId: {out}")
        return room

    def client(self, name, *args):
        """Starts `showroomctl client` with the cluster's client seeds; output in clients/NAME.out."""
        return SwiftClient(self, name, ["client", *self._seed_flags(self.client_seeds()), *args])

    def caller(self, name, *args):
        """Starts `showroomctl call` (a Swift 1v1 caller) with the members as seeds."""
        return SwiftClient(self, name, ["call", *self._seed_flags(self.cluster_seeds()), *args])

    @staticmethod
    def _seed_flags(seeds):
        return [flag for seed in seeds for flag in ("--seed", seed)]


class SwiftClient:
    """A showroomctl process (a synthetic client, a caller) and what it printed."""

    def __init__(self, cluster, name, args):
        self.name = name
        directory = os.path.join(cluster.out_dir, "clients")
        os.makedirs(directory, exist_ok=True)
        self.out_path = os.path.join(directory, f"{name}.out")
        self.log_path = os.path.join(directory, f"{name}.log")
        command = [os.path.join(cluster.bin_dir, "showroomctl"), *args]
        with open(self.out_path, "w") as out, open(self.log_path, "w") as log:
            self.process = subprocess.Popen(command, env=cluster.env, stdout=out, stderr=log,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        cluster.processes.add(self.process.pid)

    def lines(self):
        with open(self.out_path) as file:
            return file.read().splitlines()

    def line(self, prefix):
        """The first output line starting with `prefix`, or None."""
        return next((line for line in self.lines() if line.startswith(prefix)), None)

    def await_line(self, prefix, deadline_s=20):
        def probe():
            found = self.line(prefix)
            if not found and self.process.poll() is not None:
                raise CheckFailed(f"{self.name} exited ({self.process.returncode}) without '{prefix}': "
                                  f"{describe(' | '.join(self.lines()[-3:]))}")
            return found
        return poll(f"{self.name}: a line '{prefix}'", probe, deadline_s)

    def decoded_frames(self):
        """Frames of its host decoded so far (the `decoded` line it prints twice a second)."""
        counts = [int(m.group(1)) for m in (re.search(r"^decoded .* frames=(\d+)", l) for l in self.lines()) if m]
        return counts[-1] if counts else 0

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)


def field(line, key):
    match = re.search(rf"\b{key}=(\S+)", line or "")
    return match.group(1) if match else None


class Browser:
    """Headless Chromium with a fake camera and microphone, a fresh profile, a phone-sized window."""

    def __init__(self, name, out_dir, processes):
        self.name = name
        self.out_dir = out_dir
        profile = os.path.join(out_dir, f"profile-{name}")
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--mute-audio",
                     "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
                     "--autoplay-policy=no-user-gesture-required", "--no-first-run",
                     "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                     "--window-size=414,860", f"--user-data-dir={profile}"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        log = os.path.join(out_dir, f"chromedriver-{name}.log")
        try:
            service = Service("/usr/bin/chromedriver", log_output=log)
        except TypeError:  # Selenium before 4.11
            service = Service("/usr/bin/chromedriver", log_path=log)
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_page_load_timeout(20)
        self.driver.set_script_timeout(10)
        driver_pid = service.process.pid
        processes.add(driver_pid)
        # The browser itself is the driver's child: recorded too, so nothing outlives a crash.
        for child in children(driver_pid):
            processes.add(child)
        self.console = []

    def open(self, url):
        self.driver.get(url)
        poll(f"{url}: the page's counters", lambda: self.script("return !!(window.showroomTest && window.showroomTest.ready)"), 20)

    def script(self, source, *args):
        return self.driver.execute_script(source, *args)

    def snapshot(self):
        return self.script("return window.showroomTest ? window.showroomTest.snapshot() : null")

    def users(self, label=None):
        users = (self.snapshot() or {}).get("users", [])
        return [u for u in users if label is None or u["label"] == label]

    def user(self, uid, label="live"):
        """A remote user's counters; for 'live', in the channel of the room on screen (prejoined
        neighbours list their hosts too, with nothing decoded)."""
        snapshot = self.snapshot() or {}
        channel = snapshot.get("channel") if label == "live" else None
        return next((u for u in snapshot.get("users", []) if u["uid"] == uid and u["label"] == label
                     and (channel is None or u["channel"] == channel)), None)

    def canvas(self, selector):
        return self.script("return window.showroomTest.canvasStats(arguments[0])", selector)

    def screenshot(self, name):
        path = os.path.join(self.out_dir, f"{name}.png")
        self.driver.save_screenshot(path)
        return path

    def frame_counter(self, selector, save_as=None):
        """The Swift test pattern's frame counter read from the canvas in `selector` (barcode.js):
        `{counter, width, height, bits}`, counter None when it does not read; None without a
        picture. With `save_as`, the very picture read is saved as a PNG of that name next to the
        screenshots (at the canvas's own size, the decoded frame's), its path under `path`."""
        read = self.script(BARCODE_READER, selector, bool(save_as))
        png = read.pop("png", None) if read else None
        if save_as and png and png.startswith("data:image/png;base64,"):
            read["path"] = os.path.join(self.out_dir, f"{save_as}.png")
            with open(read["path"], "wb") as file:
                file.write(base64.b64decode(png.split(",", 1)[1]))
        return read

    def save_console(self):
        try:
            self.console.extend(self.driver.get_log("browser"))
        except Exception:
            return
        with open(os.path.join(self.out_dir, f"console-{self.name}.log"), "w") as file:
            for entry in self.console:
                file.write(f"{entry.get('level')} {entry.get('message')}\n")

    def quit(self):
        self.save_console()
        try:
            self.driver.quit()
        except Exception:
            pass


def children(pid):
    """The child processes of `pid` (any of its threads may have started them)."""
    found = []
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(path) as file:
                found.extend(int(p) for p in file.read().split())
        except OSError:
            pass
    return found
