"""Runs the browser scenarios against a cluster that `Tests/browser-check.sh` started.

    run.py --root REPO --run-dir DIR --bin-dir BIN --web URL [--only 1,3]

Screenshots, the pages' counters on failure, browser consoles and the Swift clients' output go to
DIR/browser/. Exits 1 when a scenario fails.
"""

import argparse
import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import Browser, CheckFailed, Cluster, Processes  # noqa: E402
from scenarios import SCENARIOS  # noqa: E402
import server_checks  # noqa: E402

HOSTS = 5
HOST_UID_BASE = 3000


class Context:
    def __init__(self, cluster, web, out_dir, processes):
        self.cluster = cluster
        self.web = web if web.endswith("/") else web + "/"
        self.out_dir = out_dir
        self.processes = processes
        self.rooms = {}
        self.hosts = {}
        self._viewer = None

    def page(self, path):
        return self.web + path

    @staticmethod
    def host_uid(i):
        return HOST_UID_BASE + i

    @property
    def viewer(self):
        """One browser for all scenarios (a fresh profile per run); each scenario opens its page."""
        if self._viewer is None:
            self._viewer = Browser("viewer", self.out_dir, self.processes)
        return self._viewer

    def screenshot(self, browser, name):
        path = browser.screenshot(name)
        print(f"    screenshot {os.path.basename(path)}", flush=True)

    def start_hosts(self):
        """Five Swift hosts, each in its own room created in order (the feed lists the newest first);
        the fifth accepts 1v1 calls."""
        for i in range(1, HOSTS + 1):
            uid = self.host_uid(i)
            self.rooms[i] = self.cluster.create_room(f"Swift show {i}", uid, f"swift-host-{i}")
            extra = ["--accept-calls"] if i == HOSTS else []
            self.hosts[i] = self.cluster.client(f"host-{i}", "--channel", self.rooms[i], "--uid", str(uid),
                                                "--role", "broadcaster", "--fps", "15", "--width", "320",
                                                "--height", "240", *extra)
        for i, host in self.hosts.items():
            host.await_line("joined", 30)
        self.hosts[HOSTS].await_line("calls_accepted", 30)

    def close(self):
        if self._viewer:
            self._viewer.quit()
        for host in self.hosts.values():
            host.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True)
    parser.add_argument("--run-dir", required=True)
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--web", required=True, help="the web app's address, http://HOST:PORT/app/")
    parser.add_argument("--only", default="", help="scenario numbers, comma-separated")
    options = parser.parse_args()

    out_dir = os.path.join(options.run_dir, "browser")
    os.makedirs(out_dir, exist_ok=True)
    processes = Processes(out_dir)
    cluster = Cluster(options.root, options.run_dir, options.bin_dir, out_dir, processes)
    context = Context(cluster, options.web, out_dir, processes)
    chosen = [s for s in SCENARIOS if not options.only or s[0] in options.only.split(",")]
    failures = []
    # What the servers refuse, before any page opens.
    for name, check in (("token server", server_checks.token_server), ("WebSocket origins", server_checks.node_origins)):
        try:
            print(f"  [{name}] PASS: {check(context.web)}", flush=True)
        except Exception as error:
            print(f"  [{name}] FAIL: {error}", flush=True)
            failures.append(f"[{name}]: {str(error).splitlines()[0] if str(error) else type(error).__name__}")
    try:
        started = time.monotonic()
        context.start_hosts()
        print(f"  {HOSTS} Swift hosts live in {time.monotonic() - started:.1f} s: "
              + ", ".join(f"{context.host_uid(i)} in {room}" for i, room in context.rooms.items()), flush=True)
        for number, title, scenario in chosen:
            started = time.monotonic()
            print(f"  [{number}] {title} …", flush=True)
            try:
                summary = scenario(context)
                print(f"  [{number}] PASS ({time.monotonic() - started:.1f} s): {summary}", flush=True)
            except Exception as error:  # a failed check or a broken page: the next scenario still runs
                detail = str(error) if isinstance(error, CheckFailed) else traceback.format_exc(limit=3)
                print(f"  [{number}] FAIL ({time.monotonic() - started:.1f} s): {detail}", flush=True)
                failures.append(f"[{number}] {title}: {str(error).splitlines()[0] if str(error) else type(error).__name__}")
                keep_evidence(context, number)
    except Exception as error:
        failures.append(f"setting up: {error}")
        print(f"  setting up failed: {error}", flush=True)
    finally:
        context.close()
    if failures:
        print("browser check failed:")
        for failure in failures:
            print(f"  {failure}")
        return 1
    return 0


def keep_evidence(context, number):
    """A failed scenario leaves a screenshot and the page's counters."""
    browser = context._viewer
    if browser is None:
        return
    try:
        browser.screenshot(f"{number}-failed")
        with open(os.path.join(context.out_dir, f"{number}-failed.json"), "w") as file:
            json.dump({"url": browser.driver.current_url, "snapshot": browser.snapshot()}, file, indent=1)
        browser.save_console()
    except Exception as error:
        print(f"    (no evidence kept: {error})")


if __name__ == "__main__":
    sys.exit(main())
