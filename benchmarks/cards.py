"""Every card the bot sends, made from realistic inputs and written out to look at and to measure.

    python3 dev.py cards [--out DIR] [--shots] [--only NAME,...]

Starts the real Bolt app against the Slack stand-in (``tests/support/gallery.py`` says which inputs
make which card), and writes to DIR (default ``build/cards``):

* ``NAME.json``: each card's Block Kit, as Slack received it;
* ``NAME.html`` and ``index.html``: the cards drawn close to Slack's look
  (``tests/support/blockkit.py``), the index with every card and its figures;
* with ``--shots``, ``NAME.png``: a screenshot of each card by headless Chromium
  (Debian's ``chromium``; a dev tool, CI needs none).

It prints a table of blocks and visible characters per card (the figures of
docs/measurements.md, "Cards"). Not part of the tests; ``tests/test_cards.py`` checks the same
cards.
"""

from __future__ import annotations

import argparse
import html
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from support import blockkit, gallery  # noqa: E402 - after the path to tests/ is set

BUDGET = 1500  # visible characters a verdict or alert card may show (issue 38)
BUDGETED = (gallery.VERDICTS, gallery.ALERTS)


def figures(shot: gallery.Shot) -> dict[str, int]:
    return {"blocks": len(shot.blocks), "visible": blockkit.visible_chars(shot.blocks)}


def _page(title: str, body: str) -> str:
    return (
        f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{blockkit.CSS}</style><body>{body}</body>"
    )


def _card(shot: gallery.Shot, phone: bool = False) -> str:
    f = figures(shot)
    over = shot.family in BUDGETED and f["visible"] > BUDGET
    flag = f' <span class="over">over the {BUDGET} budget</span>' if over else ""
    width = " phone" if phone else ""
    return (
        f'<div class="card{width}" id="{shot.name}{"-phone" if phone else ""}">'
        f'<div class="meta"><b>{html.escape(shot.title)}</b>{" (phone width)" if phone else ""}'
        f" · {html.escape(shot.source)}</div>"
        f"{blockkit.surface_html(shot.surface)}"
        f'<div class="figures">{f["blocks"]} blocks · {f["visible"]:,} characters visible'
        f"{flag} · <a href='{shot.name}.json'>JSON</a></div></div>"
    )


def write(out: Path, made: gallery.Gallery) -> None:
    out.mkdir(parents=True, exist_ok=True)
    cards = []
    for shot in made.shots:
        (out / f"{shot.name}.json").write_text(
            json.dumps(shot.surface, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        one = _card(shot)
        (out / f"{shot.name}.html").write_text(_page(shot.title, one), encoding="utf-8")
        if shot.phone:  # the same card at a phone's width, on a page of its own
            phone = _card(shot, phone=True)
            (out / f"{shot.name}-phone.html").write_text(_page(shot.title, phone), encoding="utf-8")
            one += phone
        cards.append(one)
    nav = "".join(f'<a href="#{s.name}">{html.escape(s.name)}</a>' for s in made.shots)
    skipped = "".join(f"<p>Left out: {html.escape(s)}</p>" for s in made.skipped)
    body = f"<h1>rlmap-bot: every card</h1><nav>{nav}</nav>{skipped}{''.join(cards)}"
    (out / "index.html").write_text(_page("rlmap-bot cards", body), encoding="utf-8")


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def screenshot(browser: str, page: Path, png: Path, width: int) -> None:
    """A tall window's screenshot of ``page``, cut to the card (the page's background below it
    trimmed with Pillow, which matplotlib brings)."""
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                f"--window-size={width},6000",
                f"--screenshot={png}",
                page.as_uri(),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
    from PIL import Image, ImageChops

    image = Image.open(png).convert("RGB")
    background = Image.new("RGB", image.size, image.getpixel((1, image.height - 1)))
    box = ImageChops.difference(image, background).getbbox()
    if box:
        image.crop((0, 0, image.width, min(image.height, box[3] + 24))).save(png)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "cards")
    parser.add_argument("--shots", action="store_true", help="screenshots with headless Chromium")
    parser.add_argument("--only", default="", help="comma-separated card names to screenshot")
    args = parser.parse_args(argv)
    browser = chromium() if args.shots else None
    if args.shots and browser is None:
        print("--shots needs Chromium: apt-get install -y chromium", file=sys.stderr)
        return 2
    made = gallery.make()
    write(args.out, made)
    print(f"{'card':<22} {'family':<12} {'blocks':>6} {'visible':>8}")
    for shot in made.shots:
        f = figures(shot)
        over = "  over budget" if shot.family in BUDGETED and f["visible"] > BUDGET else ""
        print(f"{shot.name:<22} {shot.family:<12} {f['blocks']:>6} {f['visible']:>8,}{over}")
    for note in made.skipped:
        print(f"left out: {note}")
    if browser is not None:
        only = {n for n in args.only.split(",") if n}
        for shot in made.shots:
            if only and shot.name not in only:
                continue
            pages = [(shot.name, 820)] + ([(f"{shot.name}-phone", 430)] if shot.phone else [])
            for page, width in pages:
                screenshot(browser, args.out / f"{page}.html", args.out / f"{page}.png", width)
    print(f"written to {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
