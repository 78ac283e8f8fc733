#!/usr/bin/env python3
"""Opens an HTML page of ptdsim in headless Chromium and checks it (docs/report.md "Tests").

Talks the Chrome DevTools Protocol over --remote-debugging-pipe (file descriptors 3 and 4), so
it needs nothing but the Python standard library and the chromium binary: no network, no
package. It fails (exit 1) when the page's bytes hold a URL scheme (http: or https:), a src= or
an href= / url() that is not an #anchor of the page, when the page logs a console error or an uncaught exception, when
the page requests anything but itself (every request that is not the page's own file: or data:
URL), when a chart lacks its title or axis label, or when a selector given with --expect
matches fewer elements than asked, or when the page is slow to open (see --max-load-ms). It
writes a PNG of the whole page and prints the time the page took to open (navigation start to
the first frame drawn after the load event) and the CPU time the page's renderer spent on it.

  render_page.py --chromium /usr/bin/chromium --page sweep.html --png sweep.png \
      --expect '#heatmap rect.cell=4' --expect '#pareto .front=1'
"""
import argparse
import base64
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time


class Pipe:
    """CDP messages over a pair of pipes, each message a JSON text ended by a NUL byte."""

    def __init__(self, write_fd, read_fd):
        self.w = write_fd
        self.r = read_fd
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        return self.wait_reply(self.next_id)

    def read_message(self):
        while b"\0" not in self.buf:
            chunk = os.read(self.r, 1 << 20)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def wait_reply(self, msg_id):
        while True:
            m = self.read_message()
            if m.get("id") == msg_id:
                if "error" in m:
                    raise RuntimeError(f"DevTools error: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method):
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self.read_message()
            if m.get("method") == method:
                return m
            self.events.append(m)


def high_fd(fd):
    """Moves a descriptor above 4 so that the child's dup2 onto 3 and 4 cannot clobber it."""
    import fcntl

    new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return new


def offline_problems(text):
    """What in the page's bytes could reach outside it: a URL scheme, any src=, an href= or
    url() that is not an #anchor of the page (docs/report.md "Self-contained")."""
    problems = []
    for m in re.finditer(r"https?:", text, re.IGNORECASE):
        problems.append(f"'{m.group(0)}' at byte {m.start()}")
    for m in re.finditer(r"\bsrc\s*=", text, re.IGNORECASE):
        problems.append(f"'src=' at byte {m.start()}")
    for m in re.finditer(r"\b(href\s*=\s*[\"']?|url\(\s*[\"']?)([^\"'\s>)]*)", text, re.IGNORECASE):
        if not m.group(2).startswith("#"):
            problems.append(f"'{m.group(0)}' at byte {m.start()}: not an anchor of the page")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--page", required=True)
    ap.add_argument("--png", required=True)
    ap.add_argument("--width", type=int, default=1200)
    ap.add_argument("--expect", action="append", default=[], help="SELECTOR=MIN_COUNT")
    ap.add_argument("--max-load-ms", type=float, default=0,
                    help="fail when opening takes longer, unless the renderer's CPU time stays under --max-cpu-ms")
    ap.add_argument("--max-cpu-ms", type=float, default=0,
                    help="an opening within this much of the renderer's CPU time passes, however long it took")
    ap.add_argument("--timeout", type=int, default=90)
    ap.add_argument("--clip", help="X,Y,W,H in CSS pixels: only this part of the page into the PNG")
    ap.add_argument("--print", action="store_true", help="render with the print stylesheet")
    a = ap.parse_args()

    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError("no answer from chromium")))
    signal.alarm(a.timeout)

    page = os.path.abspath(a.page)
    url = "file://" + page
    failures = offline_problems(open(page, encoding="utf-8").read())
    profile = tempfile.mkdtemp(prefix="ptdsim-chromium-")
    to_chrome_r, to_chrome_w = map(high_fd, os.pipe())
    from_chrome_r, from_chrome_w = map(high_fd, os.pipe())

    def child_fds():
        os.dup2(to_chrome_r, 3)
        os.dup2(from_chrome_w, 4)

    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-extensions", "--disable-dev-shm-usage", "--hide-scrollbars",
        "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank",
    ]
    # close_fds would run after preexec_fn and close 3 and 4; every other descriptor of this
    # process is close-on-exec (Python's default), so nothing else leaks into chromium
    proc = subprocess.Popen([a.chromium] + flags, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, close_fds=False, preexec_fn=child_fds)
    os.close(to_chrome_r)
    os.close(from_chrome_w)
    try:
        cdp = Pipe(to_chrome_w, from_chrome_r)
        target = cdp.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        s = cdp.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network", "Performance"):
            cdp.send(domain + ".enable", session=s)
        cdp.send("Emulation.setDeviceMetricsOverride",
                 {"width": a.width, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=s)
        if a.print:
            cdp.send("Emulation.setEmulatedMedia", {"media": "print"}, session=s)
        # the renderer process's CPU seconds so far (Performance.getMetrics "ProcessTime"; None
        # where this Chromium does not report it)
        def cpu_s():
            metrics = cdp.send("Performance.getMetrics", session=s)["metrics"]
            return next((m["value"] for m in metrics if m["name"] == "ProcessTime"), None)

        cpu0 = cpu_s()
        cdp.send("Page.navigate", {"url": url}, session=s)
        cdp.wait_event("Page.loadEventFired")

        def js(expr):
            r = cdp.send("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=s)
            if "exceptionDetails" in r:
                raise RuntimeError(f"evaluating {expr!r}: {r['exceptionDetails']}")
            return r["result"].get("value")

        # open time: from navigation start to the first frame drawn after the load event (two
        # animation frames: the first runs before that frame's layout and paint)
        def open_ms():
            r = cdp.send("Runtime.evaluate", {"expression": (
                "new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(() => ok(performance.now()))))"),
                "awaitPromise": True, "returnByValue": True}, session=s)
            return r["result"]["value"]

        # Wall time is what a reader waits, but other work on the machine stretches it; the
        # renderer's CPU time is the page's own cost, which that work does not add to. An opening
        # passes when its wall time is within --max-load-ms or its CPU time within --max-cpu-ms;
        # the page fails when none of up to three openings passes.
        def opening(cpu_before):
            wall = open_ms()
            cpu_after = cpu_s()
            cpu = None if cpu_before is None or cpu_after is None else (cpu_after - cpu_before) * 1000
            return wall, cpu

        def passes(wall, cpu):
            return (not a.max_load_ms or wall <= a.max_load_ms
                    or (a.max_cpu_ms and cpu is not None and cpu <= a.max_cpu_ms))

        openings = [opening(cpu0)]
        while not passes(*openings[-1]) and len(openings) < 3:
            cpu0 = cpu_s()
            cdp.send("Page.reload", {"ignoreCache": True}, session=s)
            cdp.wait_event("Page.loadEventFired")
            openings.append(opening(cpu0))
        wall, cpu = openings[-1]
        cpu_text = "not reported" if cpu is None else f"{cpu:.0f} ms"
        print(f"{os.path.basename(page)}: {os.path.getsize(page)} bytes, open (loaded and drawn) in {wall:.0f} ms,"
              f" the renderer's CPU {cpu_text} (opening {len(openings)})")
        if not passes(wall, cpu):
            failures.append(f"each of {len(openings)} openings took more than {a.max_load_ms:.0f} ms"
                            + (f" and more than {a.max_cpu_ms:.0f} ms of the renderer's CPU" if a.max_cpu_ms else "")
                            + " (" + "; ".join(f"{w:.0f} ms, CPU " + ("not reported" if c is None else f"{c:.0f} ms")
                                               for w, c in openings) + ")")

        for sel_count in a.expect:
            sel, _, want = sel_count.rpartition("=")
            got = js(f"document.querySelectorAll({json.dumps(sel)}).length")
            print(f"  {sel}: {got}")
            if got < int(want):
                failures.append(f"'{sel}' matches {got} elements, expected at least {want}")
        charts = js("Array.from(document.querySelectorAll('svg.chart')).map(c => [c.id,"
                    " c.querySelectorAll('.chart-title').length, c.querySelectorAll('.axis-label').length])")
        if not charts:
            failures.append("the page has no chart")
        for cid, titles, labels in charts:
            if titles < 1:
                failures.append(f"chart '{cid}' has no title")
            if labels < 1:
                failures.append(f"chart '{cid}' has no axis label")

        # the whole page into the PNG
        size = cdp.send("Page.getLayoutMetrics", session=s)["cssContentSize"]
        cdp.send("Emulation.setDeviceMetricsOverride",
                 {"width": a.width, "height": int(size["height"]) + 1, "deviceScaleFactor": 1, "mobile": False},
                 session=s)
        params = {"format": "png", "captureBeyondViewport": True}
        if a.clip:
            x, y, w, h = (float(v) for v in a.clip.split(","))
            params["clip"] = {"x": x, "y": y, "width": w, "height": h, "scale": 1}
        shot = cdp.send("Page.captureScreenshot", params, session=s)
        with open(a.png, "wb") as f:
            f.write(base64.b64decode(shot["data"]))

        for e in cdp.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                failures.append(f"uncaught exception: {p['exceptionDetails'].get('text')}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                failures.append(f"console {p['type']}: {[x.get('value') for x in p.get('args', [])]}")
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                failures.append(f"console error: {p['entry'].get('text')} {p['entry'].get('url', '')}")
            elif m == "Network.requestWillBeSent":
                req = p["request"]["url"]
                if req != url and not req.startswith("data:"):
                    failures.append(f"the page requested {req}")
        try:
            cdp.send("Browser.close")
        except RuntimeError:
            pass
    finally:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(to_chrome_w)
        os.close(from_chrome_r)
        shutil.rmtree(profile, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
