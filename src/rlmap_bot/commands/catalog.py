"""Commands over the catalog: ask, show, stages, papers, and the knowledge store's upkeep."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rlmap_bot import wording
from rlmap_bot.commands.context import Invocation
from rlmap_bot.commands.declare import Said
from rlmap_bot.commands.registry import ALL, Param, Registry
from rlmap_bot.errors import NotFoundError, UsageError

CLI = frozenset({"cli"})


if TYPE_CHECKING:
    from rlmap_bot.results.ask import Answer, AnswerStream
    from rlmap_bot.results.cards import Card
    from rlmap_bot.results.general import (
        CatalogExport,
        KbBuilt,
        KbStats,
        KindCount,
        PaperList,
        StageList,
    )


def register(registry: Registry) -> None:
    registry.command(
        "ask",
        "search the map: stages, topics, papers and diagnosis signals",
        Param(
            "question",
            Said(
                slack="what you want to know",
                terminal="what you want to know ('-': one question per line on stdin)",
            ),
            kind="rest",
            required=True,
            metavar="QUESTION",
        ),
        Param(
            "limit",
            "how many matches",
            type="int",
            default=5,
            short="-n",
            range=(1, 50),
            surfaces=CLI,
        ),
        json=True,
        order=1,
        examples=("ask why is my reward going up but evals down?",),
    )(ask)
    registry.command(
        "show",
        "a whole entry with its links, by id, title or alias",
        Param(
            "entry",
            Said(
                slack="an id, a title or an alias",
                terminal="an id, a title or an alias (quote titles with spaces in the shell)",
            ),
            kind="rest",
            required=True,
            metavar="ID",
        ),
        json=True,
        order=2,
        fits=_names_an_entry,
        examples=("show reward", "show R1", 'show "reward hacking"'),
    )(show)
    registry.command("stages", "the five stages of the map", json=True, order=3)(stages)
    registry.command(
        "papers",
        "papers in the catalog, newest first, optionally filtered",
        Param(
            "by",
            "only papers by this author or organisation",
            word="by",
            metavar="AUTHOR",
            phrase=True,
        ),
        Param("stage", "only papers on this stage", metavar="STAGE", word="stage"),
        Param("topic", "only papers on this subtopic", metavar="TOPIC", word="topic"),
        json=True,
        order=4,
        examples=("papers by Schulman", "papers --stage reward"),
        fits=names_someone,
    )(papers)
    registry.command(
        "kb build",
        "validate every knowledge file, build a new store, swap it in atomically",
        surfaces=CLI,
        order=60,
    )(kb_build)
    registry.command(
        "kb check", "validate the knowledge files without building", surfaces=CLI, order=61
    )(kb_check)
    registry.command(
        "kb stats", "entry counts by kind", surfaces=ALL - {"slack"}, json=True, order=62
    )(kb_stats)
    registry.command(
        "kb export",
        "every entry, all fields, as a JSON list",
        Param("json", "print JSON (required)", kind="flag", required=True, surfaces=CLI),
        surfaces=CLI,
        order=63,
    )(kb_export)


def ask(ctx: Invocation, question: str, limit: int = 5) -> Answer | AnswerStream:
    if question.strip() == "-" and ctx.lines is not None:
        return _ask_each(ctx, ctx.lines(), limit)
    if not question or not question.strip():
        raise UsageError(
            "ask needs a question, e.g. `ask why is my reward going up but evals down?`"
        )
    return ctx.core.ask(question, limit=limit)


def _ask_each(ctx: Invocation, lines: Any, limit: int) -> AnswerStream:
    """One answer per line read, in order; a blank line gets an answer that says it was empty."""
    from rlmap_bot.results.ask import AnswerStream, Unanswered

    def answers() -> Any:
        for line in lines:
            question = line.strip()
            yield ctx.core.ask(question, limit=limit) if question else Unanswered()

    return AnswerStream(answers())


def _names_an_entry(core: Any, args: dict[str, Any]) -> bool:
    """`show X` is a command when X is one word, or names an entry; else the line is a question."""
    text = str(args.get("entry", ""))
    return len(text.split()) <= 1 or core is None or core.resolve(text) is not None


def show(ctx: Invocation, entry: str) -> Card:
    text = entry.strip()
    if not text:
        raise UsageError("show needs an entry id, e.g. `show reward`")
    found = ctx.core.resolve(text)
    card = ctx.core.card(found.id) if found is not None else None
    if card is None:
        close = ctx.core.suggest_ids(text)
        hint = f"; {wording.did_you_mean(close)}" if close else "; try `ask` to search"
        raise NotFoundError(f"no entry with id {text[:80]!r}{hint}")
    return card


def stages(ctx: Invocation) -> StageList:
    from rlmap_bot.results.general import StageList, StageRow

    return StageList(
        stages=[
            StageRow(order=s.order, id=s.id, title=s.title, one_line=s.one_line)
            for s in ctx.core.stages()
        ]
    )


def papers(
    ctx: Invocation, by: str | None = None, stage: str | None = None, topic: str | None = None
) -> PaperList:
    from rlmap_bot.results.general import PaperList, PaperRow

    core = ctx.core
    everything = core.papers()
    found = list(everything)
    filters = []
    if stage:
        titles = {s.id: s.title for s in core.stages()}
        stage_id = _pick(stage, titles, "stage")
        found = [p for p in found if stage_id in p.stages]
        filters.append(f"on {titles[stage_id]}")
    if topic:
        subtopics = {t.id: t.title for t in core.store.all("topic") if getattr(t, "parent", None)}
        topic_id = _pick(topic, subtopics, "subtopic")
        found = [p for p in found if topic_id in p.subtopics]
        filters.append(f"on {subtopics[topic_id]}")
    if by:
        narrowed = [p for p in found if _written_by(p, by)]
        near = _near_bylines(by, found) if not narrowed else []
        if near:  # a given name bylines leave out, or a letter off: read as the byline, and say so
            narrowed = [p for p in found if _written_by(p, near[0])]
            filters.append(f"by {near[0]} (for “{by}”)")
        else:
            filters.append(f"by {by}")
        found = narrowed
    rows = [
        PaperRow(
            id=p.id,
            title=p.title,
            byline=p.byline or None,
            year=p.year,
            stages=list(p.stages),
            verification=p.verification,
            url=p.link,
        )
        for p in found
    ]
    return PaperList(papers=rows, filters=filters, total=len(everything))


def _pick(value: str, known: dict[str, str], what: str) -> str:
    """An id from an id, a title or a word of the title
    ("reward" -> "reward", "rollout" -> "rollouts").
    """
    from rlmap_bot.text import fold

    low = fold(value).strip().lower()
    for key, title in known.items():
        if low in {key, title.lower()} or low.rstrip("s") == key.rstrip("s"):
            return key
    words = [key for key, title in known.items() if low in title.lower().split()]
    if len(words) == 1:
        return words[0]
    from rapidfuzz import fuzz, process

    close = [
        key
        for key, _, _ in process.extract(
            low, list(known), scorer=fuzz.WRatio, limit=2, score_cutoff=70
        )
    ]
    hint = wording.did_you_mean(close) + " " if close else ""
    raise UsageError(f"unknown {what} {value!r}; {hint}known: {', '.join(known)}")


def _byline(paper: Any) -> str:
    """A paper's authors and organisation, as one text."""
    return " ".join([*paper.authors, paper.organisation or ""])


def _split_names(text: str) -> list[str]:
    return text.replace(".", " ").replace(",", " ").split()


def _byline_words(text: str) -> list[str]:
    from rlmap_bot.text import fold

    return [fold(w).lower() for w in _split_names(text)]


def _name_words(who: str) -> list[str]:
    """The words of a name asked for ("Lambert et al": lambert)."""
    return [w for w in _byline_words(who) if w not in {"et", "al"}]


def _written_by(paper: Any, who: str) -> bool:
    wanted = _name_words(who)
    names = _byline_words(_byline(paper))
    return bool(wanted) and all(w in names for w in wanted)


# How close a misspelt name must be to a byline's word to be read as it (rapidfuzz ratio, 0-100),
# and how long: one letter doubled, dropped or swapped in a name of six letters or more ("Schulmann"
# 94, "deepmnd" 93), never a short name one letter from another person's ("Lin" and "Ling", "Yan"
# and "Yang", "Kim" and "Kimi" are different bylines). Judgement, checked on those examples.
_NEAR_NAME = 85
_NEAR_NAME_LETTERS = 6


def names_someone(core: Any, args: dict[str, Any]) -> bool:
    """In chat, `papers by X` is the papers list when X is a name: one word (as ever), a byline's
    name as written ("Google Brain"), or a first name before a byline's surname ("John Schulman").
    A line that runs on past the name ("papers by DeepMind using world models", "papers by the
    DeepSeek team") is a question, and search answers it."""
    who = str(args.get("by") or "")
    wanted = _name_words(who)
    if len(wanted) <= 1:
        return True
    papers = core.papers()
    return any(_written_by(p, who) for p in papers) or (
        len(wanted) == 2 and any(_written_by(p, wanted[1]) for p in papers)
    )


def _near_bylines(who: str, papers: list[Any]) -> list[str]:
    """The byline meant by a name no paper carries: a first name before a byline's surname is left
    out ("John Schulman": Schulman), a long word a letter
    off a byline's is read as it ("Schulmann")."""
    from rapidfuzz import fuzz, process

    from rlmap_bot.text import fold

    # Each byline word as matched, and as the byline writes it ("deepmind": "DeepMind").
    cased = {fold(w).lower(): w for p in papers for w in _split_names(_byline(p))}
    known = sorted(cased)
    wanted = _name_words(who)
    typed = list(wanted)
    if len(wanted) == 2:
        wanted = wanted[
            1:
        ]  # no paper has both words (else this is not asked): bylines give surnames
    fixed = []
    for word in wanted:
        near = (
            (word, 100, 0)
            if word in known
            else (
                process.extractOne(word, known, scorer=fuzz.ratio, score_cutoff=_NEAR_NAME)
                if len(word) >= _NEAR_NAME_LETTERS
                else None
            )
        )
        if near is None:
            return []
        fixed.append(near[0])
    if not fixed or fixed == typed:
        return []
    if not any(_written_by(p, " ".join(fixed)) for p in papers):
        return []
    return [" ".join(cased[w] for w in fixed)]


def kb_build(ctx: Invocation) -> KbBuilt:
    from rlmap_bot.errors import ConfigError
    from rlmap_bot.knowledge.catalog import KnowledgeError, KnowledgeErrors
    from rlmap_bot.paths import Paths
    from rlmap_bot.results.general import KbBuilt
    from rlmap_bot.search.index import build_store

    try:
        catalog = _validate(ctx.knowledge_root)
        build_store(ctx.knowledge_root, ctx.db_path, catalog=catalog)
    except (
        ConfigError
    ) as exc:  # not ours to replace, or not writable: say which setting chose the file
        raise ConfigError(f"{Paths.from_env().knowledge_db_source(ctx.db_path)}: {exc}") from None
    except KnowledgeError as exc:
        raise (
            KnowledgeErrors(
                [
                    KnowledgeError(
                        e.path, e.entry, e.field, f"{e.problem} (the previous store is unchanged)"
                    )
                    for e in exc.errors
                ]
            )
            if len(exc.errors) > 1
            else KnowledgeError(
                exc.path, exc.entry, exc.field, f"{exc.problem} (the previous store is unchanged)"
            )
        ) from None
    return KbBuilt(path=str(ctx.db_path), counts=_counts(catalog.entries.values()))


def kb_check(ctx: Invocation) -> KbBuilt:
    from rlmap_bot.results.general import KbBuilt

    catalog = _validate(ctx.knowledge_root)
    from rlmap_bot.curation.check import check_additions

    check_additions(ctx, catalog)  # approved additions pass the same checks (curation/check.py)
    return KbBuilt(
        path=str(ctx.knowledge_root), counts=_counts(catalog.entries.values()), checked_only=True
    )


def _validate(root):
    """The catalog and the metric-name table, every mistake in either reported together."""
    from rlmap_bot.knowledge.loader import KnowledgeError, load_catalog, raise_all
    from rlmap_bot.runs.aliases import load_aliases

    errors: list[KnowledgeError] = []
    catalog = None
    try:
        catalog = load_catalog(root)
    except KnowledgeError as exc:
        errors += exc.errors
    if (root / "metrics").is_dir():
        try:
            load_aliases(root)
        except KnowledgeError as exc:
            errors += exc.errors
    raise_all(errors)
    return catalog


def kb_stats(ctx: Invocation) -> KbStats:
    from rlmap_bot.results.general import KbStats, KindCount

    store = ctx.core.store
    counts = [KindCount(kind=k, count=n) for k, n in store.counts().items()]
    return KbStats(
        counts=counts,
        total=sum(c.count for c in counts),
        built_at=store.meta.get("built_at"),
        knowledge_root=store.meta.get("knowledge_root"),
    )


def kb_export(ctx: Invocation, json: bool = True) -> CatalogExport:
    from rlmap_bot.results.general import CatalogExport

    out = []
    for stored in sorted(ctx.core.store.history(), key=lambda s: (s.entry.kind, s.entry.id)):
        data = stored.entry.model_dump(mode="json")
        data.update(
            first_seen=stored.first_seen, changed_at=stored.changed_at, source=stored.source
        )
        out.append(data)
    return CatalogExport(out)


def _counts(entries) -> list[KindCount]:
    from rlmap_bot.results.general import KindCount

    counts: dict[str, int] = {}
    for entry in entries:
        counts[entry.kind] = counts.get(entry.kind, 0) + 1
    return [KindCount(kind=k, count=n) for k, n in sorted(counts.items())]
