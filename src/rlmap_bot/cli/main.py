"""The ``rlmap-bot`` command line: a front-end over the same core as Slack.

Every command reads paths from the environment (``RLMAP_DB``,
``RLMAP_KNOWLEDGE``) or the global options, and reports problems as one line on
standard error with a non-zero exit, never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from rlmap_bot import config
from rlmap_bot.cli import render
from rlmap_bot.core import Core, CoreError
from rlmap_bot.diagnosis.engine import DiagnosisInputError
from rlmap_bot.knowledge.loader import KnowledgeError, load_catalog
from rlmap_bot.knowledge.store import KnowledgeStore, build_store


class Paths:
    def __init__(self, knowledge: Path | None, db: Path | None):
        self.knowledge = knowledge or config.knowledge_dir()
        self.db = db or config.knowledge_db()
        self._core: Core | None = None

    def core(self) -> Core:
        if self._core is None:
            try:
                self._core = Core(self.knowledge, self.db)
            except CoreError as exc:
                fail(str(exc))
            if self._core.warning:
                click.echo(f"warning: {self._core.warning}", err=True)
        return self._core


def fail(message: str, code: int = 1) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(code)


def slack_configured() -> bool:
    """Tokens present means the user wants the Slack app, not the local shell."""
    return bool(os.environ.get("SLACK_BOT_TOKEN"))


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--knowledge", type=click.Path(path_type=Path), help="Knowledge folder (default: $RLMAP_KNOWLEDGE or the bundled one).")
@click.option("--db", type=click.Path(path_type=Path), help="Knowledge store file (default: $RLMAP_DB).")
@click.version_option(package_name="rlmap-bot")
@click.pass_context
def cli(ctx: click.Context, knowledge: Path | None, db: Path | None) -> None:
    """rlmap-bot: the RL Scaling Bottleneck Map in your terminal and your Slack.

    With no command: serves Slack when SLACK_BOT_TOKEN is set, else starts the local shell.
    """
    ctx.obj = Paths(knowledge, db)
    if ctx.invoked_subcommand is None:
        if slack_configured():
            from rlmap_bot.slack.serve import serve_from_env  # imported late: Slack is optional for the shell

            serve_from_env(ctx.obj, http=not os.environ.get("SLACK_APP_TOKEN"))
        else:
            from rlmap_bot.cli.shell import run_shell

            run_shell(ctx.obj.core())


@cli.command()
@click.option("--http", is_flag=True, help="Serve the Events API over HTTP instead of Socket Mode.")
@click.option("--host", default="127.0.0.1", show_default=True, help="HTTP address to bind (with --http).")
@click.option("--port", default=3000, show_default=True, type=click.IntRange(0, 65535), help="HTTP port (with --http).")
@click.pass_obj
def serve(paths: Paths, http: bool, host: str, port: int) -> None:
    """Run the Slack app: Socket Mode with SLACK_APP_TOKEN, or --http at /slack/events."""
    from rlmap_bot.slack.serve import serve_from_env

    serve_from_env(paths, http=http, host=host, port=port)


@cli.command()
@click.pass_obj
def shell(paths: Paths) -> None:
    """Start the local shell (ask, show, stages, papers, diagnose, help, quit)."""
    from rlmap_bot.cli.shell import run_shell

    run_shell(paths.core())


@cli.command()
@click.option("--limit", "-n", default=5, show_default=True, type=click.IntRange(1, 50), help="How many matches.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per question.")
@click.argument("question", nargs=-1, required=True)
@click.pass_obj
def ask(paths: Paths, limit: int, as_json: bool, question: tuple[str, ...]) -> None:
    """Ask a question; QUESTION '-' reads one question per line from standard input."""
    core = paths.core()
    if question == ("-",):
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            answer = core.ask(line, limit=limit)
            click.echo(answer.model_dump_json() if as_json else render.answer_text(answer) + "\n")
        return
    answer = core.ask(" ".join(question), limit=limit)
    click.echo(answer.model_dump_json(indent=2) if as_json else render.answer_text(answer))


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print the card as JSON.")
@click.argument("entry_id")
@click.pass_obj
def show(paths: Paths, as_json: bool, entry_id: str) -> None:
    """Print a whole entry (stage, topic, paper or signal) with its links."""
    core = paths.core()
    card = core.card(entry_id)
    if card is None:
        close = core.suggest_ids(entry_id)
        hint = f"; did you mean {', '.join(close)}?" if close else "; try `rlmap-bot ask` to search"
        fail(f"no entry with id {entry_id!r}{hint}", code=2)
    click.echo(card.model_dump_json(indent=2) if as_json else render.card_text(card))


@cli.command()
@click.pass_obj
def stages(paths: Paths) -> None:
    """List the five stages of the map."""
    click.echo(render.stages_text(paths.core().stages()))


@cli.command()
@click.pass_obj
def papers(paths: Paths) -> None:
    """List every paper in the catalog."""
    click.echo(render.papers_text(paths.core().papers()))


@cli.command()
@click.option("--signals", "signals_file", type=click.File("r"), help="JSON object of signal values ('-' for stdin); no questions asked.")
@click.option("--json", "as_json", is_flag=True, help="Print the verdict as JSON (with --signals).")
@click.option("--resume", "resume_id", help="Continue a paused diagnosis (id or its first characters).")
@click.option("--list", "list_open", is_flag=True, help="List open diagnoses.")
@click.pass_obj
def diagnose(paths: Paths, signals_file, as_json: bool, resume_id: str | None, list_open: bool) -> None:
    """Find the stage that binds your RL run: guided questions, or --signals for a one-shot verdict."""
    core = paths.core()
    if signals_file is not None:
        try:
            raw = json.load(signals_file)
        except json.JSONDecodeError as exc:
            fail(f"signals file is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", code=2)
        except UnicodeDecodeError:
            fail("signals file is not UTF-8 text", code=2)
        if not isinstance(raw, dict):
            kind = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "true/false",
                    type(None): "null"}.get(type(raw), type(raw).__name__)
            fail(f"signals must be a JSON object of signal id -> value, not {kind}", code=2)
        try:
            verdict = core.diagnose(raw)
        except DiagnosisInputError as exc:
            fail(str(exc), code=2)
        click.echo(verdict.model_dump_json(indent=2) if as_json else render.verdict_text(verdict))
        return
    if as_json:
        fail("--json needs --signals FILE (the guided flow is interactive)", code=2)
    if list_open:
        sessions = core.flow.open_sessions()
        if not sessions:
            click.echo("no open diagnoses")
        for session in sessions:
            n = len(session.answers)
            click.echo(f"{session.id[:8]}  {session.user:10} {n} answer{'' if n == 1 else 's'}  "
                       f"updated {session.updated_at:%Y-%m-%d %H:%M} UTC  next: {session.current}")
        return
    session_id = None
    if resume_id:
        matches = [s.id for s in core.flow.open_sessions() if resume_id.strip() and s.id.startswith(resume_id.strip())]
        if len(matches) != 1:
            fail(f"no single open diagnosis starts with {resume_id!r}; see `rlmap-bot diagnose --list`", code=2)
        session_id = matches[0]
    from rlmap_bot.cli.diagnose_flow import run_guided

    def ask_line(prompt: str) -> str | None:
        click.echo(prompt, nl=False)
        try:
            return input()
        except EOFError:
            return None

    run_guided(core, ask=ask_line, say=click.echo, user=os.environ.get("USER", "local"), where="terminal",
               session_id=session_id)


@cli.group()
def digest() -> None:
    """Digests of new catalog entries (subscriptions live in Slack: /rlmap digest)."""


@digest.command("preview")
@click.option("--since", type=click.DateTime(formats=["%Y-%m-%d"]), help="Entries added on or after DATE (default: 7 days ago).")
@click.option("--json", "as_json", is_flag=True, help="Print the digest as JSON.")
@click.pass_obj
def digest_preview(paths: Paths, since, as_json: bool) -> None:
    """Print what a digest of entries added since DATE says, grouped as in Slack."""
    import datetime as dt

    from rlmap_bot.digest.content import build_digest, select_items

    core = paths.core()
    today = dt.date.today()
    start = since.date() if since else today - dt.timedelta(days=7)
    moment = dt.datetime.combine(start, dt.time.min, tzinfo=dt.timezone.utc)
    result = build_digest(select_items(core.store, set(), since=moment), start, today)
    if as_json:
        data = result.model_dump(mode="json")
        data["period"] = result.period()
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        click.echo(render.digest_text(result, start))


@cli.group()
def kb() -> None:
    """Build, check and inspect the knowledge store."""


@kb.command("build")
@click.pass_obj
def kb_build(paths: Paths) -> None:
    """Validate every knowledge file and atomically replace the store."""
    try:
        catalog = build_store(paths.knowledge, paths.db)
    except KnowledgeError as exc:
        fail(f"{exc} (the previous store is unchanged)")
    counts = _count(catalog.entries.values())
    click.echo(f"built {paths.db}: {_counts_line(counts)}")


@kb.command("check")
@click.pass_obj
def kb_check(paths: Paths) -> None:
    """Validate the knowledge files without building."""
    try:
        catalog = load_catalog(paths.knowledge)
    except KnowledgeError as exc:
        fail(str(exc))
    click.echo(f"ok: {len(catalog.entries)} entries ({_counts_line(_count(catalog.entries.values()))})")


@kb.command("stats")
@click.pass_obj
def kb_stats(paths: Paths) -> None:
    """Print entry counts by kind."""
    store = paths.core().store
    counts = store.counts()
    for kind, n in counts.items():
        click.echo(f"{kind:8} {n}")
    click.echo(f"{'total':8} {sum(counts.values())}")
    click.echo(f"built at {store.meta.get('built_at')} from {store.meta.get('knowledge_root')}")


@kb.command("export")
@click.option("--json", "as_json", is_flag=True, required=True, help="JSON list of every entry (required).")
@click.pass_obj
def kb_export(paths: Paths, as_json: bool) -> None:
    """Print every entry, all fields, as a JSON list."""
    store: KnowledgeStore = paths.core().store
    out = []
    for stored in sorted(store.history(), key=lambda s: (s.entry.kind, s.entry.id)):
        data = stored.entry.model_dump(mode="json")
        data.update(first_seen=stored.first_seen, changed_at=stored.changed_at, source=stored.source)
        out.append(data)
    click.echo(json.dumps(out, indent=2, ensure_ascii=False))


def _count(entries) -> dict[str, int]:
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.kind] = counts.get(e.kind, 0) + 1
    return dict(sorted(counts.items()))


def _counts_line(counts: dict[str, int]) -> str:
    return ", ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in counts.items())


def main() -> None:
    from rlmap_bot.state.store import StateStoreError

    try:
        cli(standalone_mode=True)
    except StateStoreError as exc:
        fail(str(exc), code=2)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
