"""The job summary as GitHub shows it, measured in a real browser: the markdown rendered by
cmark-gfm (tests/gfm.py), styled like GitHub's markdown (the sizes that decide height: 14 px
text, line height 1.5, 16 px between blocks, table cells padded 6 × 13 px), laid out by
headless Chromium in a 1280-px-wide window, and its height read from the page and from the
screenshot. Without Chromium or cmark-gfm the tests that use it skip, saying so."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from gfm import render_gfm

BROWSER = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
WIDTH = 1280

# The parts of GitHub's markdown stylesheet (github-markdown-css) that decide a page's height.
GITHUB_CSS = """
body { margin: 0; padding: 24px 32px; font: 14px/1.5 -apple-system, "Segoe UI", "Noto Sans", Helvetica, Arial, sans-serif; }
p, blockquote, ul, ol, table, pre, details { margin: 0 0 16px; }
h2 { font-size: 1.5em; margin: 24px 0 16px; padding-bottom: .3em; border-bottom: 1px solid #d0d7de; line-height: 1.25; }
h3 { font-size: 1.25em; margin: 24px 0 16px; line-height: 1.25; }
table { border-collapse: collapse; display: block; width: max-content; max-width: 100%; overflow: auto; }
td, th { padding: 6px 13px; border: 1px solid #d0d7de; }
code { font-size: 85%; padding: .2em .4em; }
pre { padding: 16px; font-size: 85%; line-height: 1.45; }
blockquote { padding: 0 1em; border-left: .25em solid #d0d7de; }
"""


def page(markdown: str, path: Path) -> Path:
    """The summary as an HTML page that writes its own height into its title once laid out."""
    html = (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{GITHUB_CSS}</style></head><body>"
        f"{render_gfm(markdown)}<script>document.title = 'height=' + document.documentElement.scrollHeight;</script>"
        "</body></html>"
    )
    path.write_text(html, encoding="utf-8")
    return path


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess:
    if BROWSER is None:
        pytest.skip(
            "no Chromium on this machine: `apt-get install -y chromium` (Debian) to measure the job summary"
        )
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--hide-scrollbars",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
    ]
    return subprocess.run([BROWSER, *flags, *args], capture_output=True, text=True, timeout=180)


def screenshot_height(markdown: str, folder: Path) -> tuple[int, int]:
    """(the page's height in px, the height of its 1280-px-wide full-page screenshot)."""
    html = page(markdown, folder / "summary.html")
    dom = _chromium(folder / "profile", f"--window-size={WIDTH},1000", "--dump-dom", html.as_uri())
    start = dom.stdout.index("height=") + len("height=")
    height = int(dom.stdout[start : dom.stdout.index("<", start)])
    shot = folder / "summary.png"
    done = _chromium(
        folder / "profile", f"--window-size={WIDTH},{height}", f"--screenshot={shot}", html.as_uri()
    )
    assert shot.exists(), done.stderr[-2000:]
    width, shot_height = struct.unpack(">II", shot.read_bytes()[16:24])  # the PNG's IHDR
    assert width == WIDTH
    return height, shot_height
