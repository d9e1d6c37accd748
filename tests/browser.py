"""Headless Chromium (Debian's `chromium`) for what people look at: dbt docs pages and report.html (stdlib only).

`Browser` keeps one Chromium and drives it over the DevTools protocol on a pipe (`--remote-debugging-pipe`: fd 3
in, fd 4 out, one JSON message per NUL-terminated frame, no websocket): it navigates, reads what a page shows,
clicks (a dbt docs column expands, and a model's macros show, only on a click) and photographs the part of a page
that matters, which `--screenshot` (the top of one viewport) cannot. One launch serves every page; `--dump-dom`
costs a launch per page (6 s a dbt docs page here) and cannot click. `serve` serves a folder over HTTP on loopback,
as `dbt docs serve` does: dbt docs fetches manifest.json and catalog.json, which a file:// page may not. Measured on
the demo: the served page renders in 4 s; `dbt docs generate --static`'s static_index.html (9 MB, inline) in 5 s.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

# what works headless on a machine without a display, a GPU, a D-Bus session or internet: nothing may phone home
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--mute-audio")
WINDOW = (1280, 900)


class Unavailable(Exception):
    """No Chromium on this machine."""


def chromium() -> str:
    """The Chromium executable: Debian's `chromium` (or `chromium-browser`) on PATH."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    raise Unavailable("no `chromium` on PATH (Debian: apt-get install chromium)")


def chromium_or_skip() -> str:
    """`chromium()` for a test: skipped where there is none, failed instead under DPTOOL_REQUIRE_CHROMIUM=1 (CI)."""
    import pytest

    try:
        return chromium()
    except Unavailable as exc:
        if os.environ.get("DPTOOL_REQUIRE_CHROMIUM") == "1":
            pytest.fail(f"DPTOOL_REQUIRE_CHROMIUM=1 and {exc}")
        pytest.skip(str(exc))


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - http.server's signature
        pass


@contextlib.contextmanager
def serve(folder: str | Path) -> Iterator[str]:
    """`folder` over HTTP on 127.0.0.1 (a free port), from a thread of this process; yields the base URL."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class ProtocolError(Exception):
    """Chromium answered a DevTools command with an error, or a script threw."""


class Browser:
    """One headless Chromium with one page, driven over the DevTools protocol on a pipe.

    Use as a context manager: Chromium and its profile are gone when the block ends.
    """

    def __init__(self, window: tuple[int, int] = WINDOW, timeout: float = 60):
        self.window, self.timeout = window, timeout
        self._profile = tempfile.mkdtemp(prefix="dptool-chromium-")
        to_chromium, self._in = os.pipe()
        self._out, from_chromium = os.pipe()

        # in the child, before exec: the pipe ends where Chromium looks for them (preexec_fn: start a Browser before
        # this process starts threads, e.g. `serve`)
        def on_fds_3_and_4():
            a, b = os.dup(to_chromium), os.dup(from_chromium)
            os.dup2(a, 3)
            os.dup2(b, 4)

        try:
            self._proc = subprocess.Popen(
                [chromium(), *FLAGS, f"--user-data-dir={self._profile}", f"--window-size={window[0]},{window[1]}",
                 "--remote-debugging-pipe", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                close_fds=False, preexec_fn=on_fds_3_and_4)
        except BaseException:
            shutil.rmtree(self._profile, ignore_errors=True)
            raise
        finally:
            os.close(to_chromium)
            os.close(from_chromium)
        self._buffer, self._next_id, self._session = b"", 0, None
        try:
            target = self._call("Target.createTarget", url="about:blank")["targetId"]
            self._session = self._call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
            self._call("Emulation.setDeviceMetricsOverride", width=window[0], height=window[1], deviceScaleFactor=1,
                       mobile=False)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError, ProtocolError, EOFError):
            self._call("Browser.close", session=False)
        try:
            self._proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        for fd in (self._in, self._out):
            with contextlib.suppress(OSError):
                os.close(fd)
        shutil.rmtree(self._profile, ignore_errors=True)

    def _call(self, method: str, session: bool = True, **params) -> dict:
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session and self._session:
            message["sessionId"] = self._session
        os.write(self._in, json.dumps(message).encode() + b"\0")
        while True:  # events (messages without our id) are not needed: readiness is polled with a script
            while b"\0" not in self._buffer:
                chunk = os.read(self._out, 1 << 20)
                if not chunk:
                    raise EOFError(f"chromium closed the DevTools pipe during {method}")
                self._buffer += chunk
            frame, _, self._buffer = self._buffer.partition(b"\0")
            reply = json.loads(frame)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise ProtocolError(f"{method}: {reply['error']}")
                return reply["result"]

    def evaluate(self, script: str):
        """The value of a JavaScript expression on the page (a promise is awaited)."""
        result = self._call("Runtime.evaluate", expression=script, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise ProtocolError(f"{script[:200]}: {result['exceptionDetails'].get('exception', {}).get('description')}")
        return result["result"].get("value")

    def wait_for(self, script: str, what: str) -> None:
        """Until the expression is truthy (polled every 50 ms), or fail after `timeout` seconds naming `what`."""
        deadline = time.monotonic() + self.timeout
        while not self.evaluate(script):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what}: not shown after {self.timeout:.0f} s ({self.evaluate('location.href')})")
            time.sleep(0.05)

    def goto(self, url: str, ready: str, what: str | None = None) -> None:
        """Open `url` and wait until the expression `ready` holds (the page has rendered what it is about)."""
        self._call("Page.navigate", url=url)
        self.wait_for(ready, what or url)

    def dom(self) -> str:
        return self.evaluate("document.documentElement.outerHTML")

    def text(self, selector: str) -> str:
        """What the element shows (innerText: no hidden descendants), or fail naming the selector."""
        text = self.evaluate(f"(document.querySelector({json.dumps(selector)}) || {{}}).innerText")
        if text is None:
            raise ProtocolError(f"nothing on {self.evaluate('location.href')} matches {selector}")
        return text

    def click(self, selector: str) -> None:
        if not self.evaluate(f"(e => e ? (e.click(), true) : false)(document.querySelector({json.dumps(selector)}))"):
            raise ProtocolError(f"nothing on {self.evaluate('location.href')} matches {selector}")

    def _fit(self, height: int) -> None:
        self._call("Emulation.setDeviceMetricsOverride", width=self.window[0], height=height, deviceScaleFactor=1,
                   mobile=False)

    def screenshot(self, png: str | Path, selector: str, *, until: str | None = None, within: str | None = None,
                   pad: int = 12, max_height: int = 1400) -> tuple[int, int]:
        """A PNG of the element `selector` matches (from its top to the bottom of `until`'s match when given),
        cropped to it with `pad` pixels around, at most `max_height` tall and, given `within`, no bigger than that
        element (a panel that scrolls shows no more); returns its size."""
        box = self.evaluate(f"""(() => {{
            const first = document.querySelector({json.dumps(selector)});
            if (!first) return null;
            const last = {f'document.querySelector({json.dumps(until)})' if until else 'first'} || first;
            const a = first.getBoundingClientRect(), b = last.getBoundingClientRect();
            const box = {{x: Math.min(a.left, b.left) + scrollX, y: a.top + scrollY,
                          right: Math.max(a.right, b.right) + scrollX, bottom: Math.max(a.bottom, b.bottom) + scrollY}};
            const panel = {f'document.querySelector({json.dumps(within)})' if within else 'null'};
            if (panel) {{
                const c = panel.getBoundingClientRect();
                box.x = Math.max(box.x, c.left + scrollX); box.right = Math.min(box.right, c.right + scrollX);
                box.y = Math.max(box.y, c.top + scrollY); box.bottom = Math.min(box.bottom, c.bottom + scrollY);
            }}
            return box;
        }})()""")
        if box is None:
            raise ProtocolError(f"nothing on {self.evaluate('location.href')} matches {selector}")
        x, y = max(0, box["x"] - pad), max(0, box["y"] - pad)
        width = box["right"] + pad - x
        height = min(box["bottom"] + pad - y, max_height)
        # a page that scrolls inside an element (dbt docs) paints only what is inside the window, even with
        # captureBeyondViewport: the window grows to the bottom of the clip (the layout above it keeps its place)
        self._fit(max(self.window[1], int(y + height) + 1))
        try:
            shot = self._call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                              clip={"x": x, "y": y, "width": width, "height": height, "scale": 1})
        finally:
            self._fit(self.window[1])
        Path(png).write_bytes(base64.b64decode(shot["data"]))
        return round(width), round(height)
