"""A headless Chromium driven over the DevTools protocol (a websocket, through aiohttp's client, already a serve
dependency): no Selenium or Playwright, and no browser download. The browser is the system's (`chromium`, Debian's
package; `$WMAP_CHROMIUM` names another); `find_browser()` returns None when there is none, and the tests skip
saying so.

    with Browser(binary) as browser:
        browser.open("http://127.0.0.1:8080/")
        browser.wait_for("document.querySelectorAll('tr.workload').length === 2")
        browser.evaluate("document.title")
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import aiohttp

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
LISTENING = re.compile(r"DevTools listening on (ws://\S+)")


def find_browser() -> str | None:
    given = os.environ.get("WMAP_CHROMIUM")
    if given:
        return given if Path(given).exists() else shutil.which(given)
    return next((found for name in CANDIDATES if (found := shutil.which(name))), None)


class BrowserError(AssertionError):
    pass


class Browser:
    def __init__(self, binary: str, *, timeout: float = 60.0) -> None:
        self.binary = binary
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="wmap-chromium-")
        self.loop = asyncio.new_event_loop()
        self.ids = itertools.count(1)
        self.process: subprocess.Popen[str] | None = None
        self.session: aiohttp.ClientSession | None = None
        self.socket: aiohttp.ClientWebSocketResponse | None = None
        self.console: list[str] = []

    def __enter__(self) -> Browser:
        self.process = subprocess.Popen(
            [
                self.binary,
                "--headless=new",
                "--no-sandbox",  # as root in a container
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: its renderer and helper processes are stopped with it
        )
        assert self.process.stderr is not None
        deadline = time.monotonic() + self.timeout
        endpoint = None
        while endpoint is None and time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line:
                raise BrowserError(f"{self.binary} exited ({self.process.wait()}) before DevTools listened")
            found = LISTENING.search(line)
            endpoint = found.group(1) if found else None
        if endpoint is None:
            raise BrowserError(f"{self.binary}: DevTools did not listen within {self.timeout:.0f}s")
        self.loop.run_until_complete(self._connect(endpoint))
        return self

    async def _connect(self, endpoint: str) -> None:
        http = "http://" + endpoint.removeprefix("ws://").split("/", 1)[0]
        self.session = aiohttp.ClientSession()
        async with self.session.get(f"{http}/json/list") as answer:
            targets = await answer.json()
        page = next(t for t in targets if t.get("type") == "page")
        self.socket = await self.session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        await self._call("Runtime.enable", {})
        await self._call("Page.enable", {})
        viewport = {"width": 1200, "height": 800, "deviceScaleFactor": 1, "mobile": False}
        await self._call("Emulation.setDeviceMetricsOverride", viewport)

    async def _call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.socket is not None
        ident = next(self.ids)
        await self.socket.send_str(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = await asyncio.wait_for(self.socket.receive(), self.timeout)
            if message.type != aiohttp.WSMsgType.TEXT:
                raise BrowserError(f"DevTools connection closed ({message.type})")
            data = json.loads(message.data)
            if data.get("method") == "Runtime.consoleAPICalled":
                args = data["params"].get("args", [])
                self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in args))
            if data.get("method") == "Runtime.exceptionThrown":
                self.console.append("exception: " + json.dumps(data["params"]["exceptionDetails"])[:500])
            if data.get("id") == ident:
                if "error" in data:
                    raise BrowserError(f"{method}: {data['error']}")
                result: dict[str, Any] = data["result"]
                return result

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        return self.loop.run_until_complete(self._call(method, params))

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, *, timeout: float = 90.0) -> Any:
        """Poll `expression` until it is truthy (a bound, not a timing assertion); its last value."""
        deadline = time.monotonic() + timeout
        value: Any = None
        while time.monotonic() < deadline:
            try:
                value = self.evaluate(expression)
            except BrowserError:
                value = None  # the page is navigating
            if value:
                return value
            time.sleep(0.2)
        body = self.evaluate("document.body ? document.body.innerText.slice(0, 2000) : ''")
        raise BrowserError(f"not true within {timeout:.0f}s: {expression}\npage: {body}\nconsole: {self.console}")

    def screenshot(self, path: Path) -> None:
        import base64

        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))

    def __exit__(self, *exc: object | TracebackType | None) -> None:
        async def close() -> None:
            if self.socket is not None:
                await self.socket.close()
            if self.session is not None:
                await self.session.close()

        try:
            self.loop.run_until_complete(close())
        finally:
            self.loop.close()
            if self.process is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=30)
            self._remove_profile()

    def _remove_profile(self) -> None:
        """Remove the profile directory. A helper process of Chromium's that has not yet exited may still write in
        it (a CI run once failed its teardown with "Directory not empty: 'Default'"), so the removal is tried
        again for a few seconds."""
        deadline = time.monotonic() + 10
        while True:
            try:
                shutil.rmtree(self.profile)
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
