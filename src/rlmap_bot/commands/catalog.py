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
    near: list[str] = []
    if by:
        asked = _name_words(by)
        known = _known_names(everything)
        narrowed = [p for p in found if _written_by(p, asked, known)]
        meant = _meant_byline(asked, found) if not narrowed else None
        if meant is not None:  # a given name bylines leave out, or a letter off: read as the byline
            shown, words = meant
            narrowed = [p for p in found if _written_by(p, words, known)]
            filters.append(f"by {shown} (for “{by}”)")
        else:
            filters.append(f"by {by}")
            if not narrowed:
                near = _near_names(asked, everything)
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
    return PaperList(papers=rows, filters=filters, total=len(everything), near=near)


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


def _labels(paper: Any) -> list[tuple[str, bool]]:
    """A paper's byline labels: each author (a person) and its organisation line."""
    people = [(a, True) for a in paper.authors]
    return people + ([(paper.organisation, False)] if paper.organisation else [])


def _name_words(who: str) -> list[str]:
    """The words of a name asked for, as bylines are read ("Lambert et al": lambert; "Z.ai": z
    ai)."""
    from rlmap_bot.text import words

    return [w for w in words(who) if w not in ("et", "al")]


def _known_names(papers: list[Any]) -> frozenset[str]:
    """Every whole name in the papers' bylines, each as one string (search/bylines.py)."""
    from rlmap_bot.search.bylines import whole_names

    return whole_names(lp for paper in papers for lp in _labels(paper))


def _written_by(paper: Any, asked: list[str], known: frozenset[str] = frozenset()) -> bool:
    """Whether a name of the paper's byline is ``asked``, its words written together or apart
    (search/bylines.py): "deepseek ai" and "DeepSeek" are DeepSeek-AI, "deepseek research" and "AI"
    are not; "DeepMind" is also Google DeepMind, since the catalog writes it as a name of its own
    (``known``)."""
    from rlmap_bot.search.bylines import cites

    return any(cites(asked, label, person, known) for label, person in _labels(paper))


# How close a misspelt name must be to a byline's word to be read as it (rapidfuzz ratio, 0-100),
# and how long: one letter doubled, dropped or swapped in a name of six letters or more ("Schulmann"
# 94, "deepmnd" 93), never a short name one letter from another person's ("Lin" and "Ling", "Yan"
# and "Yang", "Kim" and "Kimi" are different bylines). Judgement, checked on those examples.
_NEAR_NAME = 85
_NEAR_NAME_LETTERS = 6
# Bylines offered beside "no papers by X": how alike (rapidfuzz WRatio of the folded names) and how
# many. judgement: 70 keeps "Ling Team" and "Ziniu Li" for "Lin" and leaves out names that share a
# letter or two; three is a line.
_OFFERED = 70
_OFFERED_MOST = 3


def names_someone(core: Any, args: dict[str, Any]) -> bool:
    """In chat, `papers by X` is the papers list when X is a name: one word (as ever), a byline's
    name in any spelling ("Google Brain", "deepseek ai"), a letter off ("deepseek-ia"), or a first
    name before a byline's surname ("John Schulman"). A line that runs on past the name ("papers
    by DeepMind using world models", "papers by the DeepSeek team") is a question, and search
    answers it."""
    who = str(args.get("by") or "")
    asked = _name_words(who)
    if len(who.split()) <= 1:
        return True  # one word as typed ("nobody-at-all", "DeepSeek-AI")
    papers = core.papers()
    known = _known_names(papers)
    return (
        any(_written_by(p, asked, known) for p in papers)
        or _meant_byline(asked, papers) is not None
    )


def _people(papers: list[Any]) -> list[tuple[str, tuple[str, ...], bool]]:
    """Every name in the papers' bylines, as written, as its words, and whether it is a person's;
    people first."""
    from rlmap_bot.search.bylines import written

    out: dict[tuple[str, ...], tuple[str, bool]] = {}
    for paper in papers:
        for label, person in sorted(_labels(paper), key=lambda lp: not lp[1]):
            for text, ws in written(label, person):
                out.setdefault(ws, (text, person))
    return [(text, ws, person) for ws, (text, person) in out.items()]


def _given_name(asked: list[str], papers: list[Any]) -> tuple[str, list[str]] | None:
    """ "John Schulman" where bylines write "Schulman": two words, the second a person's surname."""
    from rlmap_bot.search.bylines import as_written, written

    if len(asked) != 2:
        return None
    for paper in papers:
        for label in paper.authors:
            for text, ws in written(label, True):
                if ws[-1] == asked[1]:
                    return as_written(text, ws[-1:]), asked[1:]
    return None


def _meant_byline(asked: list[str], papers: list[Any]) -> tuple[str, list[str]] | None:
    """The byline meant by a name no paper carries, as it writes it, with the words to read: a
    first name before a byline's surname is left out ("John Schulman": Schulman), a name of six
    letters or more a letter off a byline's name or one of its words is read as it ("Schulmann",
    "deepmnd", "deepseek-ia")."""
    from rapidfuzz import fuzz, process

    from rlmap_bot.search.bylines import as_written, compact

    given = _given_name(asked, papers)
    if given is not None:
        return given
    wanted = compact(asked)
    if len(wanted) < _NEAR_NAME_LETTERS:
        return None
    forms: dict[str, tuple[str, tuple[str, ...]]] = {}
    for text, ws, person in _people(papers):
        for i in range(len(ws) if person else 1):  # as a name may be cited (bylines.runs)
            for j in range(i + 1, len(ws) + 1):
                forms.setdefault(compact(ws[i:j]), (text, ws[i:j]))
    near = process.extractOne(wanted, list(forms), scorer=fuzz.ratio, score_cutoff=_NEAR_NAME)
    if near is None:
        return None
    text, ws = forms[near[0]]
    return as_written(text, ws), list(ws)


def _near_names(asked: list[str], papers: list[Any]) -> list[str]:
    """Bylines like a name no paper carries, as they are written: offered, not read as it."""
    from rapidfuzz import fuzz, process

    names = {text: " ".join(ws) for text, ws, _ in _people(papers)}
    found = process.extract(
        " ".join(asked),
        names,
        scorer=fuzz.WRatio,
        limit=_OFFERED_MOST,
        score_cutoff=_OFFERED,
    )
    return [text for _, _, text in found]


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
