"""Block Kit as a person sees it: the visible text of mrkdwn and blocks, and an HTML page close to
Slack's look, for `python3 dev.py cards` and for the tests that measure cards.

Slack's mrkdwn (docs.slack.dev "Formatting text for app surfaces"): ``*bold*``, ``_italic_``,
``~strike~``, ``` `code` ``` and ```` ```pre``` ````, ``<url|label>`` links, ``<#C..>`` channels,
``<@U..>`` people, ``<!here>`` and friends, ``:emoji:``, and three escaped characters (``&amp;``,
``&lt;``, ``&gt;``). A marker counts only at a word's edge (``snake_case_name`` stays as typed), as
Slack's client does. Emoji are drawn from a short table of the ones the bot uses; any other shows as
its name in a grey box. Images show as placeholders.
"""

from __future__ import annotations

import html
import re
from typing import Any, Iterable

EMOJI = {
    "rotating_light": "\U0001f6a8",
    "white_check_mark": "\u2705",
    "double_vertical_bar": "\u23f8\ufe0f",
    "warning": "\u26a0\ufe0f",
    "stethoscope": "\U0001fa7a",
    "tada": "\U0001f389",
    "+1": "\U0001f44d",
    "arrows_counterclockwise": "\U0001f504",
    "mag": "\U0001f50d",
    "bulb": "\U0001f4a1",
    "point_right": "\U0001f449",
    "chart_with_upwards_trend": "\U0001f4c8",
    "chart_with_downwards_trend": "\U0001f4c9",
    "hourglass_flowing_sand": "\u23f3",
    "information_source": "\u2139\ufe0f",
    "x": "\u274c",
    "repeat": "\U0001f501",
    "books": "\U0001f4da",
    "newspaper": "\U0001f4f0",
    "eyes": "\U0001f440",
    "wrench": "\U0001f527",
    "large_blue_circle": "\U0001f535",
    "small_orange_diamond": "\U0001f538",
    "arrow_right": "\u27a1\ufe0f",
    "large_orange_diamond": "\U0001f536",
    "twisted_rightwards_arrows": "\U0001f500",
    "arrow_forward": "\u25b6\ufe0f",
}

# <...> sequences: links, channels, people, special mentions (after escaping, a literal "<" is &lt;)
_ANGLE = re.compile(r"<([^<>]+)>")
_CODE = re.compile(r"```(.+?)```|`([^`\n]+)`", re.DOTALL)
_EMOJI = re.compile(r":([a-z0-9_+-]+):")
# A marker opens after the start, a space or punctuation and closes before the end, a space or
# punctuation; the text between does not start or end with a space (Slack's client, as observed).
_EDGE_BEFORE = r"(?:(?<=^)|(?<=[\s(\[{\"'“‘.,;:!?/-]))"
_EDGE_AFTER = r"(?=$|[\s)\]}\"'”’.,;:!?/-])"
_STYLES = [
    ("b", re.compile(_EDGE_BEFORE + r"\*(?=\S)([^\n]*?\S)\*" + _EDGE_AFTER, re.M)),
    ("i", re.compile(_EDGE_BEFORE + r"_(?=\S)([^\n]*?\S)_" + _EDGE_AFTER, re.M)),
    ("s", re.compile(_EDGE_BEFORE + r"~(?=\S)([^\n]*?\S)~" + _EDGE_AFTER, re.M)),
]


def _unescape(text: str) -> str:
    """Slack decodes exactly these three entities, nothing else."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _angle(inner: str) -> tuple[str, str | None]:
    """A <...> sequence: (what shows, the link or None)."""
    target, _, label = inner.partition("|")
    if target.startswith("#"):
        return "#" + (label or target[1:]), None
    if target.startswith("@"):
        return "@" + (label or target[1:]), None
    if target.startswith("!"):
        word = target[1:].split("^")[0]
        return label or "@" + word, None
    return _unescape(label or target), _unescape(target)


def _styled(text: str, marks: str) -> str:
    """HTML of plain text with the style tags in ``marks`` around it."""
    out = html.escape(text)
    for tag in marks:
        out = f"<{tag}>{out}</{tag}>"
    return out


def _emoji_html(text: str) -> str:
    def one(m: re.Match) -> str:
        name = m.group(1)
        if name in EMOJI:
            return EMOJI[name]
        return f'<span class="emoji-name">:{name}:</span>'

    return _EMOJI.sub(one, text)


def _inline(text: str) -> list[tuple[str, str]]:
    """Text between code and links, as (kind, text) with kind a set of style letters."""
    spans: list[tuple[str, str]] = [("", text)]
    for tag, pattern in _STYLES:
        next_spans: list[tuple[str, str]] = []
        for marks, chunk in spans:
            last = 0
            for m in pattern.finditer(chunk):
                if m.start() > last:
                    next_spans.append((marks, chunk[last : m.start()]))
                next_spans.append((marks + tag, m.group(1)))
                last = m.end()
            if last < len(chunk):
                next_spans.append((marks, chunk[last:]))
        spans = next_spans
    return spans


def _parts(mrkdwn: str) -> Iterable[tuple[str, str, str | None]]:
    """(kind, visible text, link): kind is 'pre', 'code', 'mention' or style letters."""
    pos = 0
    for m in _CODE.finditer(mrkdwn):
        yield from _plain_parts(mrkdwn[pos : m.start()])
        if m.group(1) is not None:
            yield "pre", _unescape(m.group(1).strip("\n")), None
        else:
            yield "code", _unescape(m.group(2)), None
        pos = m.end()
    yield from _plain_parts(mrkdwn[pos:])


def _plain_parts(text: str) -> Iterable[tuple[str, str, str | None]]:
    # styles may wrap a link (*<url|title>*): mark the links, style the text, then resolve them
    links: list[tuple[str, str | None]] = []

    def hold(m: re.Match) -> str:
        links.append(_angle(m.group(1)))
        return f"\x00{len(links) - 1}\x00"

    held = _ANGLE.sub(hold, text)
    for marks, chunk in _inline(held):
        for piece in re.split(r"(\x00\d+\x00)", chunk):
            if not piece:
                continue
            if piece.startswith("\x00"):
                shown, link = links[int(piece.strip("\x00"))]
                yield ("link:" + marks if link else "mention:" + marks), shown, link
            else:
                yield marks, _unescape(piece), None


def visible(mrkdwn: str) -> str:
    """What a person reads of a mrkdwn text: markers gone, links as their labels, entities
    decoded, emoji as one character each, zero-width spaces unseen."""
    out = []
    for kind, text, _ in _parts(mrkdwn):
        out.append(text if kind in ("pre", "code") else _EMOJI.sub("\u25cf", text))
    return "".join(out).replace("\u200b", "")


def mrkdwn_html(mrkdwn: str) -> str:
    out = []
    for kind, text, link in _parts(mrkdwn):
        if kind == "pre":
            out.append(f"<pre>{html.escape(text)}</pre>")
        elif kind == "code":
            out.append(f"<code>{html.escape(text)}</code>")
        elif kind.startswith("link:"):
            label = _styled(text, kind[5:])
            out.append(f'<a href="{html.escape(link or "")}">{label}</a>')
        elif kind.startswith("mention:"):
            out.append(f'<span class="mention">{_styled(text, kind[8:])}</span>')
        else:
            out.append(_emoji_html(_styled(text, kind)))
    return "".join(out).replace("\n", "<br>")


def _text_html(obj: dict | None) -> str:
    if not obj:
        return ""
    if obj.get("type") == "mrkdwn":
        return mrkdwn_html(obj.get("text", ""))
    shown = html.escape(obj.get("text", "")).replace("\n", "<br>")
    return _emoji_html(shown) if obj.get("emoji", True) else shown  # plain text draws :emoji:


def _text_visible(obj: dict | None) -> str:
    if not obj:
        return ""
    if obj.get("type") == "mrkdwn":
        return visible(obj.get("text", ""))
    text = obj.get("text", "")
    return _EMOJI.sub("\u25cf", text) if obj.get("emoji", True) else text


def _element_visible(element: dict) -> list[str]:
    kind = element.get("type")
    if kind in ("mrkdwn", "plain_text"):
        return [_text_visible(element)]
    if kind == "image":
        return []
    out = []
    if isinstance(element.get("text"), dict):
        out.append(_text_visible(element["text"]))
    if isinstance(element.get("placeholder"), dict):
        out.append(_text_visible(element["placeholder"]))
    for option in element.get("options") or []:
        out.append(_text_visible(option.get("text")))
    return out


def block_texts(block: dict) -> list[str]:
    """The visible texts of one block (buttons' labels and options included)."""
    out = []
    if isinstance(block.get("text"), dict):
        out.append(_text_visible(block["text"]))
    for field in block.get("fields") or []:
        out.append(_text_visible(field))
    if block.get("accessory"):
        out += _element_visible(block["accessory"])
    for element in block.get("elements") or []:
        out += _element_visible(element)
    if block.get("type") == "input":
        out.append(_text_visible(block.get("label")))
    return [t for t in out if t]


def visible_text(blocks: list[dict]) -> str:
    """Every visible text of a message or view, one block a line."""
    return "\n".join(" ".join(block_texts(b)) for b in blocks)


def visible_chars(blocks: list[dict]) -> int:
    """How many characters a person reads on the card (spaces and line breaks counted, markup
    not): the measure of the issue's visible-length budget."""
    return sum(len(t) for b in blocks for t in block_texts(b))


# -- HTML --------------------------------------------------------------------------------------
def _button(element: dict) -> str:
    style = element.get("style") or ""
    return f'<span class="button {style}">{html.escape(element["text"]["text"])}</span>'


def _element_html(element: dict) -> str:
    kind = element.get("type")
    if kind == "button":
        return _button(element)
    if kind in ("mrkdwn", "plain_text"):
        return f"<span>{_text_html(element)}</span>"
    if kind == "image":
        alt = html.escape(element.get("alt_text", ""))
        return f'<span class="image-small" title="{alt}">▣</span>'
    if kind == "checkboxes":
        boxes = "".join(
            f'<label class="check">☐ {_text_html(o.get("text"))}</label>'
            for o in element.get("options") or []
        )
        return f'<span class="checks">{boxes}</span>'
    if kind in ("static_select", "multi_static_select", "overflow", "external_select"):
        label = _text_html(element.get("placeholder")) or "Choose…"
        options = "".join(
            f"<li>{_text_html(o.get('text'))}</li>" for o in element.get("options") or []
        )
        return f'<span class="select">{label} ▾<ul class="options">{options}</ul></span>'
    if kind == "radio_buttons":
        return "".join(
            f'<label class="check">◯ {_text_html(o.get("text"))}</label>'
            for o in element.get("options") or []
        )
    if kind == "plain_text_input":
        tall = " tall" if element.get("multiline") else ""
        return f'<span class="input{tall}"></span>'
    return f'<span class="unknown">[{html.escape(str(kind))}]</span>'


def block_html(block: dict) -> str:
    kind = block.get("type")
    if kind == "header":
        return f'<div class="header">{_text_html(block.get("text"))}</div>'
    if kind == "divider":
        return '<hr class="divider">'
    if kind == "context":
        items = "".join(_element_html(e) for e in block.get("elements") or [])
        return f'<div class="context">{items}</div>'
    if kind == "actions":
        items = "".join(_element_html(e) for e in block.get("elements") or [])
        return f'<div class="actions">{items}</div>'
    if kind == "image":
        alt = html.escape(block.get("alt_text", ""))
        return f'<div class="image">image: {alt}</div>'
    if kind == "input":
        label = _text_html(block.get("label"))
        hint = _text_html(block.get("hint"))
        element = _element_html(block.get("element") or {})
        return (
            f'<div class="inputblock"><div class="label">{label}</div>{element}<div '
            f'class="hint">{hint}</div></div>'
        )
    if kind == "section":
        body = f'<div class="text">{_text_html(block.get("text"))}</div>'
        fields = block.get("fields") or []
        if fields:
            body += (
                '<div class="fields">'
                + "".join(f"<div>{_text_html(f)}</div>" for f in fields)
                + "</div>"
            )
        side = block.get("accessory")
        accessory = f'<div class="accessory">{_element_html(side)}</div>' if side else ""
        return f'<div class="section">{body}{accessory}</div>'
    return f'<div class="unknown">[{html.escape(str(kind))} block]</div>'


CSS = """
body { font-family: Lato, "Helvetica Neue", Helvetica, Arial, sans-serif; font-size: 15px;
  line-height: 1.46668; color: #1d1c1d; background: #f8f8f8; margin: 0; padding: 24px; }
.card { background: #fff; border: 1px solid #e8e8e8; border-radius: 8px; margin: 0 0 28px;
  max-width: 760px; }
.card.phone { max-width: 390px; }
.meta { font-size: 13px; color: #616061; padding: 10px 16px; border-bottom: 1px solid #eee; }
.meta b { color: #1d1c1d; }
.message { display: flex; padding: 12px 16px; }
.avatar { width: 36px; height: 36px; border-radius: 6px; background: #4a154b; color: #fff;
  font-weight: 900; display: flex; align-items: center; justify-content: center; flex: none;
  margin-right: 8px; font-size: 13px; }
.content { flex: 1; min-width: 0; }
.name { font-weight: 900; } .app { font-size: 10px; background: #ddd; color: #616061;
  padding: 1px 3px; border-radius: 2px; margin-left: 4px; }
.time { color: #616061; font-size: 12px; margin-left: 6px; }
.ephemeral { color: #616061; font-size: 13px; margin-bottom: 4px; }
.view-title { font-weight: 900; font-size: 18px; padding: 14px 16px; border-bottom: 1px solid #eee;
  display: flex; justify-content: space-between; }
.view-body { padding: 8px 16px 16px; }
.view-foot { padding: 12px 16px; border-top: 1px solid #eee; text-align: right; }
.header { font-weight: 900; font-size: 18px; margin: 4px 0; }
.section { display: flex; margin: 4px 0; } .section .text { flex: 1; min-width: 0;
  overflow-wrap: anywhere; } .accessory { margin-left: 12px; flex: none; }
.fields { display: grid; grid-template-columns: 1fr 1fr; gap: 4px 12px; margin-top: 4px; }
.context { font-size: 13px; color: #616061; margin: 4px 0; overflow-wrap: anywhere; }
.context > * { margin-right: 6px; }
.actions { margin: 8px 0; display: flex; flex-wrap: wrap; gap: 8px; }
.button { display: inline-block; border: 1px solid #bbb; border-radius: 4px; padding: 3px 12px;
  font-weight: 700; font-size: 13px; background: #fff; }
.button.primary { background: #007a5a; color: #fff; border-color: #007a5a; }
.button.danger { background: #e01e5a; color: #fff; border-color: #e01e5a; }
.divider { border: 0; border-top: 1px solid #ddd; margin: 12px 0; }
.image { background: #eee; color: #616061; padding: 40px; text-align: center; margin: 6px 0;
  border-radius: 6px; }
a { color: #1264a3; text-decoration: none; }
code { font-family: Monaco, Menlo, Consolas, monospace; font-size: 12px; color: #e01e5a;
  background: #f6f6f6; border: 1px solid #ddd; border-radius: 3px; padding: 0 3px; }
pre { font-family: Monaco, Menlo, monospace; font-size: 12px; background: #f8f8f8;
  border: 1px solid #ddd; border-radius: 4px; padding: 8px; white-space: pre-wrap; margin: 4px 0; }
.mention { background: #e8f5fa; color: #1264a3; border-radius: 3px; padding: 0 2px; }
.emoji-name { background: #eee; font-size: 11px; border-radius: 3px; padding: 0 2px; }
.check { display: block; } .select { border: 1px solid #bbb; border-radius: 4px;
  padding: 3px 10px; } .options { display: none; }
.inputblock { margin: 10px 0; } .label { font-weight: 700; } .hint { font-size: 12px;
  color: #616061; } .input { display: block; border: 1px solid #bbb; border-radius: 4px;
  height: 30px; } .input.tall { height: 80px; }
.figures { font-size: 12px; color: #616061; padding: 6px 16px; border-top: 1px solid #eee; }
.over { color: #e01e5a; font-weight: 700; }
nav a { display: inline-block; margin: 0 12px 4px 0; }
"""


def surface_html(surface: dict[str, Any]) -> str:
    """One card: a message (``blocks``, ``ephemeral``) or a view (``view``: home or modal)."""
    view = surface.get("view")
    if view is not None:
        blocks = "".join(block_html(b) for b in view.get("blocks") or [])
        title = _text_html(view.get("title")) if view.get("type") == "modal" else "Home"
        foot = ""
        if view.get("type") == "modal":
            buttons = [f'<span class="button">{_text_html(view.get("close")) or "Cancel"}</span>']
            if view.get("submit"):
                buttons.append(
                    f'<span class="button primary">{_text_html(view.get("submit"))}</span>'
                )
            foot = f'<div class="view-foot">{" ".join(buttons)}</div>'
        return (
            f'<div class="view-title"><span>{title}</span><span>rlmap</span></div><div '
            f'class="view-body">{blocks}</div>{foot}'
        )
    blocks = "".join(block_html(b) for b in surface.get("blocks") or [])
    if not blocks:  # a text-only message
        blocks = block_html(
            {"type": "section", "text": {"type": "mrkdwn", "text": surface.get("text", "")}}
        )
    note = '<div class="ephemeral">👁 Only visible to you</div>' if surface.get("ephemeral") else ""
    return (
        f'<div class="message"><div class="avatar">RL</div><div class="content"><span '
        f'class="name">rlmap</span><span class="app">APP</span><span class="time">10:42 '
        f"AM</span>{note}{blocks}</div></div>"
    )


# -- Slack's limits ------------------------------------------------------------------------------
def problems(surface: dict[str, Any]) -> list[str]:
    """What Slack would refuse in a message or a view: slack_sdk's own validators (each block
    parsed and written back) and the limits they do not check (docs.slack.dev, Block Kit
    reference: 50 blocks a message, 100 a view, 10 context elements, 25 actions, one action_id
    once per block, unique block_ids)."""
    from slack_sdk.errors import SlackObjectFormationError
    from slack_sdk.models.blocks import Block
    from slack_sdk.models.views import View

    found: list[str] = []
    view = surface.get("view")
    blocks = (view or {}).get("blocks") if view is not None else surface.get("blocks") or []
    most = 100 if view is not None else 50
    if len(blocks) > most:
        found.append(f"{len(blocks)} blocks (at most {most})")
    if view is not None:
        try:
            View(**view).to_dict()
        except (SlackObjectFormationError, TypeError) as exc:
            found.append(f"view: {exc}")
    ids = [b["block_id"] for b in blocks if b.get("block_id")]
    if len(ids) != len(set(ids)):
        found.append(f"block_ids used twice: {sorted({i for i in ids if ids.count(i) > 1})}")
    for n, block in enumerate(blocks):
        try:
            parsed = Block.parse(block)
            if parsed is None:
                found.append(f"block {n}: unknown type {block.get('type')}")
                continue
            parsed.to_dict()
        except SlackObjectFormationError as exc:
            found.append(f"block {n} ({block.get('type')}): {exc}")
        elements = block.get("elements") or []
        if block.get("type") == "context" and len(elements) > 10:
            found.append(f"block {n}: {len(elements)} context elements (at most 10)")
        actions = [e.get("action_id") for e in elements if e.get("action_id")]
        if len(actions) != len(set(actions)):
            found.append(f"block {n}: an action_id used twice")
    text = surface.get("text")
    if text is not None and len(text) > 40000:
        found.append("notification text over 40,000 characters")
    return found
