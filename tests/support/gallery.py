"""Every card the bot sends, made from realistic inputs by the real Bolt app against the Slack
stand-in: what a reviewer looks at (`python3 dev.py cards`) and what the card tests measure.

The bot runs in process (signed requests into Bolt's dispatch, as in the Slack tests) over the
bundled catalog; each scene drives it as a person would (a slash command, a mention, a click, App
Home opened, a watch checked as the scheduler checks it) and keeps what reached the stand-in: the
message, the private reply, the view. Inputs: logs of the real-log bank (``RLMAP_REAL_LOGS``, or
``../shared/real_logs`` beside the checkout; their scenes are left out when it is not there),
``examples/grpo-run.log``, arXiv's recorded answers (``tests/data/arxiv``) and synthetic logs in
real formats (``support.runlogs``) for the watch's turns that no bank log takes.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from support import KNOWLEDGE, ROOT
from support import runlogs as rl
from support.standin import StandIn

# What each family of card is held to: a verdict or an alert opens with three lines and stays
# under about 1,500 visible characters (issue 38).
VERDICTS = "verdict"
ALERTS = "alert"


@dataclass
class Shot:
    """One card as Slack received it."""

    name: str  # a file name: diagnosis-opd-262
    title: str  # what it shows, for the index
    family: str  # verdict, alert, guided, digest, home, ask, help, credentials, curation
    source: str  # where its input came from
    surface: dict[str, Any]  # {"blocks", "text", "ephemeral"} or {"view": {...}}
    phone: bool = False  # also shown at a phone's width

    @property
    def blocks(self) -> list[dict]:
        view = self.surface.get("view")
        return (view or {}).get("blocks") or self.surface.get("blocks") or []


@dataclass
class Gallery:
    shots: list[Shot] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # scenes left out, and why


def real_logs() -> Path | None:
    given = os.environ.get("RLMAP_REAL_LOGS")
    if given:
        return Path(given) if Path(given).is_dir() else None
    for default in (ROOT.parent / "shared" / "real_logs", Path("/work/shared/real_logs")):
        if default.is_dir():
            return default
    return None


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _message(call) -> dict[str, Any]:
    args = call.args
    return {
        "blocks": _json(args.get("blocks")) or [],
        "text": args.get("text", ""),
        "ephemeral": call.method == "chat.postEphemeral"
        or (call.method == "response_url" and args.get("response_type") != "in_channel"),
    }


def _view(call) -> dict[str, Any]:
    return {"view": _json(call.args["view"])}


class Clock:
    """The watch clock, moved by hand (as the Slack watch tests move it)."""

    def __init__(self) -> None:
        self.now = dt.datetime.now(dt.UTC).replace(microsecond=0)

    def __call__(self) -> dt.datetime:
        return self.now

    def advance(self, minutes: float) -> dt.datetime:
        self.now += dt.timedelta(minutes=minutes)
        return self.now


class Scenes:
    """The bot, the stand-ins and the folders one gallery is made with."""

    def __init__(self, work: Path, db: Path | None = None):
        from rlmap_bot.crypto import new_key
        from rlmap_bot.search.index import build_store
        from support.arxiv_standin import ArxivStandIn
        from support.bot import start_bot

        self.work = work
        self.roots = work / "runs"
        self.roots.mkdir(parents=True, exist_ok=True)
        if db is None:
            db = work / "knowledge.db"
            build_store(KNOWLEDGE, db)
        self.standin = StandIn().start()
        self.arxiv = ArxivStandIn().start()
        self.clock = Clock()
        self.key = new_key()
        self.bot = start_bot(
            self.standin,
            db,
            work / "state.db",
            rlmap_run_roots=str(self.roots),
            rlmap_curators="UCUR",
            rlmap_curator_channel="CCUR",
            rlmap_arxiv_url=self.arxiv.url,
            rlmap_arxiv_delay_seconds=0,
            rlmap_arxiv_timeout_seconds=5,
            rlmap_encryption_key=self.key,
            rlmap_admins="UADMIN",
        )
        self.bot.front.watches.clock = self.clock
        self.names = 0

    def close(self) -> None:
        self.bot.stop()
        self.standin.stop()
        self.arxiv.stop()

    # -- driving ---------------------------------------------------------------------------
    def command(self, text: str, channel: str = "CTEAM", user: str = "UANA"):
        """`/rlmap TEXT`: the reply through its response_url."""
        self.names += 1
        name = f"g{self.names}"
        self.bot.slack.command(text, channel=channel, user=user, respond_as=name)
        return self.standin.wait_for("response_url", lambda c: c.target == name, timeout=60)[0]

    def mention(self, text: str, channel: str = "CTEAM", user: str = "UANA"):
        from support.standin import BOT_USER

        ts = f"{int(time.time())}.{self.names:06d}"
        self.names += 1
        self.bot.slack.event(
            {
                "type": "app_mention",
                "user": user,
                "channel": channel,
                "ts": ts,
                "text": f"<@{BOT_USER}> {text}",
            }
        )
        return self.standin.wait_for(
            "chat.postMessage",
            lambda c: c.args.get("thread_ts") == ts,
            timeout=30,
        )[0]

    def posts_since(self, mark: int, method: str = "chat.postMessage") -> list:
        return [c for c in self.standin.calls[mark:] if c.method == method]


# -- the scenes ----------------------------------------------------------------------------------
def _ask(s: Scenes) -> Iterator[Shot]:
    questions = [
        ("ask-confident", "Ask: a confident answer", "what does the PPO paper say?"),
        (
            "ask-guess",
            "Ask: a guess",
            "the judge model says most replies are fine but when I check them myself many are junk",
        ),
        ("ask-nothing", "Ask: nothing relevant", "where is the coffee machine?"),
    ]
    for name, title, question in questions:
        call = s.command(f"ask {question}")
        yield Shot(name, title, "ask", f"/rlmap ask {question}", _message(call))
    call = s.mention("papers by Schulman")
    yield Shot(
        "ask-papers", "Papers by an author", "ask", "@rlmap papers by Schulman", _message(call)
    )


def _help(s: Scenes) -> Iterator[Shot]:
    yield Shot("help", "Help (/rlmap help)", "help", "/rlmap help", _message(s.command("help")))
    call = s.command("help watch")
    yield Shot("help-watch", "Help on one command", "help", "/rlmap help watch", _message(call))
    call = s.command("watch --every")
    yield Shot("help-usage", "A usage slip", "help", "/rlmap watch --every", _message(call))


def _copy_log(s: Scenes, source: Path, name: str) -> str:
    dest = s.roots / name / source.name
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, dest)
    return f"{name}/{source.name}"


def _diagnoses(s: Scenes, logs: Path | None, gallery: Gallery) -> Iterator[Shot]:
    runs = [("grpo-run", ROOT / "examples" / "grpo-run.log", "examples/grpo-run.log")]
    if logs is not None:
        for folder in ("verl-agent-opd-262", "easyr1-geo3k-161", "tinker-rlvr-if-113"):
            found = [p for p in (logs / folder).iterdir() if p.name != "SOURCE.md"]
            if found:
                runs.append((folder, found[0], f"real_logs/{folder}/{found[0].name}"))
    else:
        gallery.skipped.append("diagnoses of real logs: the real-log bank is not here")
    for name, path, shown in runs:
        where = _copy_log(s, path, name)
        call = s.command(f"diagnose --run {where}")
        card = _message(call)
        yield Shot(
            f"diagnosis-{name}",
            f"Diagnosis from logs: {shown}",
            VERDICTS,
            f"/rlmap diagnose --run {shown}",
            card,
        )
        details = _button(card["blocks"], "details_show")
        if details is not None:
            yield Shot(
                f"details-{name}",
                f"Details of the diagnosis of {shown}",
                "details",
                "the Details button of the card above",
                _view(_click_for_view(s, "details_show", details["value"])),
            )


def _button(blocks: list[dict], action_id: str) -> dict | None:
    for block in blocks:
        for element in [*block.get("elements", []), block.get("accessory") or {}]:
            if element.get("action_id") == action_id:
                return element
    return None


def _click_for_view(s: Scenes, action_id: str, value: str, channel: str = "CTEAM"):
    """A button clicked on a message; the modal it opened."""
    before = len(s.standin.of("views.open"))
    s.bot.slack.click(action_id, value, user="UANA", channel=channel)
    return s.standin.wait_for("views.open", count=before + 1, timeout=30)[-1]


def _guided(s: Scenes) -> Iterator[Shot]:
    from support.slackio import start

    card = start(s.bot, s.standin, channel="CGUIDE", user="UANA")
    first = {"blocks": card.blocks, "text": "", "ephemeral": False}
    yield Shot(
        "guided-question", "Guided diagnosis: a question", "guided", "/rlmap diagnose", first
    )
    # A team whose training reward rises while the eval does not: ticks that, then answers.
    ticked = {
        "diag_pick_block": {
            "diag_pick": {
                "type": "checkboxes",
                "selected_options": [{"value": "reward_up_eval_flat"}],
            }
        }
    }
    before = card.updates()
    s.bot.slack.click(
        "diag_choose",
        card.buttons["diag_choose"]["value"],
        user="UANA",
        channel=card.channel,
        message_ts=card.ts,
        thread_ts=card.thread,
        state=ticked,
    )
    card._wait_update(before)
    truth = {
        "proxy_reward_trend": "rising",
        "heldout_score_trend": "falling",
        "task_repeat_epochs": 1.0,
    }
    for _ in range(3):
        if card.signal is None:
            break
        card.answer(truth)
    if card.signal is not None:
        card.click("diag_stop")
    verdict = {"blocks": card.blocks, "text": "", "ephemeral": False}
    yield Shot(
        "guided-verdict",
        "Guided diagnosis: the verdict card",
        VERDICTS,
        "/rlmap diagnose, three answers, then Stop",
        verdict,
    )


class _Growing:
    """A log on disk written line by line up to a step, as a trainer appends it."""

    def __init__(self, path: Path, records: list):
        self.path, self.records, self.written = path, records, -1
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")

    def grow(self, upto: int) -> None:
        lines = rl.verl_console_lines([r for r in self.records if self.written < r[0] <= upto])
        with open(self.path, "a", encoding="utf-8") as f:
            f.writelines(lines)
        self.written = upto


def _tick(s: Scenes, watched: str, minutes: float = 15):
    """The next scheduled check of the watch of ``watched`` (a path under the roots), as the
    scheduler fires it; None once it is paused."""
    from rlmap_bot.watch.schedule import last_slot

    s.clock.advance(minutes)
    target = str((s.roots / watched).resolve())
    watch = next((w for w in s.bot.front.core.state.watches.list() if w.path == target), None)
    if watch is None or watch.status != "active":
        return None
    return s.bot.front.watches.fire(watch.id, last_slot(watch, s.clock.now))


def _post_of(s: Scenes, alert_id: str):
    for call in s.standin.of("chat.postMessage"):
        meta = _json(call.args.get("metadata")) or {}
        if (meta.get("event_payload") or {}).get("alert_id") == alert_id:
            return call
    return None


def _watches(s: Scenes) -> Iterator[Shot]:
    """A run going bad and back, a NaN, a change of binding stage and a stall, each watched the way
    the Slack watch tests watch them (synthetic verl logs with planted phases), checked as the
    scheduler checks them."""
    wanted = {
        ("alert", "start"): ("alert-stage", "Watch alert: a stage starts to bind"),
        ("alert", "fault"): ("alert-fault", "Watch alert: a fault (NaN)"),
        ("alert", "change"): ("alert-change", "Watch alert: the binding stage changes"),
        ("resolved", "no_longer"): ("alert-resolved", "Watch: resolved"),
        ("resolved", "fault_over"): ("alert-fault-over", "Watch: a fault is over"),
        ("paused", "paused"): ("alert-paused", "Watch: paused (the log stopped growing)"),
        ("alert", "stop"): ("alert-stop", "Watch alert: when to stop (the forecast ceiling)"),
    }
    seen: set[str] = set()
    plans = [
        (
            "hack",
            [("healthy", 300), ("reward_hacking", 300), ("recovery", 400)],
            [300, 450, 600, 800, 900, 1000],
        ),
        ("nan", [("healthy", 300), ("nan", 10), ("healthy", 200)], [300, 310, 400]),
        # a pool that gets solved: the reward levels off, and the watch says when to stop
        ("level", [("healthy", 300), ("saturation", 300)], [300, 375, 450, 525, 600]),
        (
            "turn",
            [("healthy", 200), ("reward_hacking", 250), ("rollout_bound", 400)],
            list(range(200, 851, 130)),
        ),
    ]
    for name, phases, steps in plans:
        s.clock.now = dt.datetime.now(dt.UTC).replace(microsecond=0)  # the watch starts now
        records = rl.named(rl.phased(phases), "verl")
        log = _Growing(s.roots / "watch" / name / "train.log", records)
        log.grow(steps[0])
        watched = f"watch/{name}/train.log"
        s.command(f"watch {watched}")
        alerts = []
        for upto in steps[1:]:
            log.grow(upto)
            result = _tick(s, watched)
            alerts += result.alerts if result is not None else []
        if name == "hack":  # then the run stops: an hour without a new step pauses the watch
            for _ in range(4):
                result = _tick(s, watched, 20)
                alerts += result.alerts if result is not None else []
        for alert in alerts:
            kinds = [c.kind for c in alert.changes]
            # an alert with a fault among its changes is a fault's, whatever it names first
            first = "fault" if "fault" in kinds else (kinds[0] if kinds else "")
            shot = wanted.get((alert.kind, first))
            call = _post_of(s, alert.alert_id)
            if shot is None or shot[0] in seen or call is None:
                continue
            seen.add(shot[0])
            yield Shot(
                shot[0],
                shot[1],
                ALERTS,
                f"a watch of a synthetic verl log, phases {', '.join(p for p, _ in phases)}",
                _message(call),
            )
        s.command(f"unwatch watch/{name}/train.log")


def _digest(s: Scenes) -> Iterator[Shot]:
    """A channel subscribed a week ago gets its first digest: what the catalog took in that week."""
    s.command("digest subscribe weekly mon 09:00", channel="CNEWS")
    state = s.bot.front.core.state.subscriptions
    sub = state.get("T0001", "CNEWS")
    assert sub is not None
    state.save(sub.model_copy(update={"created_at": sub.created_at - dt.timedelta(days=7)}))
    mark = len(s.standin.calls)
    s.command("digest now", channel="CNEWS")
    [post] = [c for c in s.posts_since(mark) if c.args["channel"] == "CNEWS"]
    yield Shot(
        "digest-week",
        "Digest: one week of the catalog",
        "digest",
        "/rlmap digest now in a channel subscribed a week ago (the real catalog)",
        _message(post),
        phone=True,
    )


def _home(s: Scenes) -> Iterator[Shot]:
    # UADMIN watches a run in a channel they are in and has a diagnosis open.
    records = rl.named(rl.phased([("healthy", 300), ("reward_hacking", 300)]), "verl")
    log = _Growing(s.roots / "home" / "exp42" / "train.log", records)
    log.grow(400)
    s.command("watch home/exp42/train.log", channel="CHOME", user="UADMIN")
    s.standin.user_channels["UADMIN"] = ["CHOME", "CTEAM"]
    s.bot.slack.command("diagnose", user="UADMIN", channel="CHOME", respond_as="home-diag")
    s.standin.wait_for(
        "chat.postMessage", lambda c: c.args["channel"] == "CHOME" and c.args.get("thread_ts")
    )
    # An admin who has set the W&B key: the credentials section shows who and when, never the key.
    from rlmap_bot.crypto import TokenCipher

    cipher = TokenCipher.from_setting(s.key)
    s.bot.front.core.state.credentials.set("T0001", "WANDB_API_KEY", "x" * 40, cipher, "UADMIN")
    s.bot.slack.event({"type": "app_home_opened", "user": "UADMIN", "channel": "D1", "tab": "home"})
    call = s.standin.wait_for("views.publish", lambda c: c.args.get("user_id") == "UADMIN")[-1]
    yield Shot(
        "home",
        "App Home: an admin with a watch and an open diagnosis",
        "home",
        "app_home_opened by an admin who watches a run and has a diagnosis open",
        _view(call),
    )


def _credentials(s: Scenes) -> Iterator[Shot]:
    before = len(s.standin.of("views.open"))
    s.bot.slack.click("credentials_open", "open", user="UADMIN", container="view")
    call = s.standin.wait_for("views.open", count=before + 1)[-1]
    yield Shot(
        "credentials-form",
        "Tracker credentials: the form",
        "credentials",
        "App Home's Set or clear button",
        _view(call),
    )


def _curation(s: Scenes) -> Iterator[Shot]:
    # "REST: Stress Testing Large Reasoning Models by Asking Multiple Problems at Once"
    call = s.command("suggest 2507.10541", user="UANA")
    yield Shot(
        "suggest-reply",
        "Suggest: the reply",
        "curation",
        "/rlmap suggest 2507.10541",
        _message(call),
    )
    cards = s.standin.wait_for(
        "chat.postMessage", lambda c: c.args["channel"] == "CCUR", timeout=30
    )
    card = cards[-1]
    yield Shot(
        "curation-card",
        "Curators' card: a suggested paper",
        "curation",
        "the suggestion of arXiv 2507.10541 (arXiv's recorded answer)",
        _message(card),
    )


def _scaling(s: Scenes) -> Iterator[Shot]:
    """`/rlmap forecast` and `/rlmap compare` on real logs when the bank is here (else on the
    example log and a copy of it cut short)."""
    logs = real_logs()
    if logs is not None:
        one = _copy_log(s, next((logs / "easyr1-geo3k-161").glob("*.jsonl")), "geo3k")
        # Two repeats of verl's PPO benchmark (data parallel, then Ulysses sequence parallel):
        # both in the bank CI has since its first 22 logs.
        pair = [
            _copy_log(s, next((logs / name).glob("*.csv")), name)
            for name in ("verl-csv-ppo-dp2-116", "verl-csv-ppo-ulysses-116")
        ]
        compare = f"compare {pair[0]} {pair[1]}"
    else:
        one = _copy_log(s, ROOT / "examples" / "grpo-run.log", "grpo")
        compare = f"compare {one} {one}"
    call = s.command(f"forecast {one}")
    yield Shot("forecast", "A run's forecast", "scaling", f"/rlmap forecast {one}", _message(call))
    call = s.command(compare)
    yield Shot("compare", "Two runs compared", "scaling", f"/rlmap {compare}", _message(call))


SCENES = (_ask, _help, _guided, _digest, _home, _credentials, _curation, _watches, _scaling)


def make(work: Path | None = None, db: Path | None = None) -> Gallery:
    """Every card, made by a bot started for the purpose (about a minute on 2 busy cores, most of
    it importing and drawing the watch's charts); ``db``: a knowledge store built already."""
    gallery = Gallery()
    own = work is None
    work = work or Path(tempfile.mkdtemp(prefix="rlmap-cards-"))
    scenes = Scenes(work, db)
    try:
        gallery.shots += list(_diagnoses(scenes, real_logs(), gallery))
        for scene in SCENES:
            gallery.shots += list(scene(scenes))
    finally:
        scenes.close()
        if own:
            shutil.rmtree(work, ignore_errors=True)
    return gallery
