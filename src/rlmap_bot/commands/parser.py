"""The one parser: click reads the command line and every chat line, from the same declarations.

Each declared command becomes a click command (:func:`click_command`). The terminal
hands it ``argv``; the shell, ``/rlmap`` and mentions hand it the words of a line
(:func:`parse_words`). Chat words are rewritten to their options before click
parses (``papers by Schulman stage reward`` is ``papers --by Schulman --stage
reward``), in both places, so ``rlmap-bot papers by Schulman`` works too.

Why click drives and not a parser of our own: click already reads the terminal
(types, ranges, ``-`` for stdin, ``--help``), and a second, hand-written parser
for chat lines drifted from it (an option given twice, a chat word and its
option, were read differently). Rewriting chat words is the only chat-specific
step, and it is a plain token map. On top of click, :class:`DeclaredCommand`
refuses what click would quietly settle: an option given twice and options the
declaration says exclude each other.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Callable, Iterable

import click
from click.core import ParameterSource

from rlmap_bot.commands.declare import Command, Param, command_usage, surface_prefix, where_it_works
from rlmap_bot.errors import RlmapError, UsageError

# A question or file read from the terminal is capped: the bot answers questions, not books.
MAX_INPUT_CHARS = 200_000


class StrayWords(UsageError):
    """Words a command does not take: in chat the line
    is then a question rather than this command.
    """


# Words that end a phrase value ("papers by Schulman on PPO": the name is Schulman) or show there is
# none ("papers by on PPO", a mention that could not be
# named): what follows is a question's, not a name's.
PHRASE_STOPS = frozenset("on about in for with from to of that which regarding and or re".split())


def chat_to_flags(params: Iterable[Param], words: Iterable[str]) -> list[str]:
    """``by X`` -> ``--by X``, ``quiet`` -> ``--quiet``;
    option values and words after ``--`` are left alone.
    """
    params = list(params)
    by_word = {p.word.lower(): p for p in params if p.word}
    valued = {p.flag_name for p in params if p.kind == "option"} | {
        p.short for p in params if p.short
    }
    out: list[str] = []
    items = list(words)
    i = 0
    while i < len(items):
        word = items[i]
        if word == "--":
            out += items[i:]
            break
        param = by_word.get(word.lower())
        out.append(param.flag_name if param is not None else word)
        takes_value = param.kind == "option" if param is not None else word in valued
        if takes_value and i + 1 < len(items):
            end = i + 2
            if param is not None and param.phrase and items[i + 1].lower() not in PHRASE_STOPS:
                # "by John Schulman stage reward": up to the
                # next chat word, option or question's word
                while (
                    end < len(items)
                    and items[end].lower() not in by_word
                    and not items[end].startswith("-")
                    and items[end].lower() not in PHRASE_STOPS
                ):
                    end += 1
            out.append(" ".join(items[i + 1 : end]))
            i = end - 1
        i += 1
    return out


class DeclaredCommand(click.Command):
    """A click command that knows its declaration: chat words, no option twice, exclusions."""

    def __init__(self, declared: Command, surface: str, examples: bool = False, **kwargs: Any):
        super().__init__(**kwargs)
        self.declared, self.surface = declared, surface
        self._examples = examples  # an "Examples:" epilog, made when help is first shown

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The epilog, with the declaration's examples that parse on this surface. Checking them
        is a parse per example (about 10 ms for every command's together), so it waits for a
        help page: a start that runs one command (a plain ask) never pays for the others'."""
        if self._examples:
            self._examples = False
            examples = examples_for(self.declared, self.surface)
            if examples:
                self.epilog = "\b\nExamples:\n" + "\n".join(f"  rlmap-bot {e}" for e in examples)
        super().format_epilog(ctx, formatter)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        typed = list(args)
        try:
            return self._parse(ctx, args)
        except click.BadOptionUsage as exc:
            # click's parser raises "requires an argument" without a context, so no usage line or
            # --help pointer is shown; and the option is named as typed ("by", not "--by").
            if "requires" in exc.message:
                name = _as_typed(self.declared, self.surface, exc.option_name, typed)
                raise click.BadOptionUsage(exc.option_name, f"{name} needs a value", ctx) from None
            if exc.ctx is None:
                exc.ctx = ctx  # "--json=yes": the option takes no value
            raise
        except click.UsageError as exc:
            if exc.ctx is None:
                exc.ctx = ctx
            raise

    def _parse(self, ctx: click.Context, args: list[str]) -> list[str]:
        params = self.declared.params_for(self.surface)
        args = chat_to_flags(params, args)
        _, _, order = self.make_parser(ctx).parse_args(args=list(args))
        seen: set[str] = set()
        for param in order:
            if (
                isinstance(param, click.Option)
                and not param.multiple
                and not param.is_flag
                and param.name
            ):
                if param.name in seen:
                    flag = param.opts[0]
                    values = [args[i + 1] for i, a in enumerate(args[:-1]) if a in param.opts]
                    raise click.UsageError(
                        f"{flag} is given twice ({', '.join(values)}); give it once", ctx
                    )
                seen.add(param.name)
        rest = super().parse_args(ctx, args)
        for group in self.declared.excludes:
            given = [
                p
                for p in params
                if p.name in group
                and ctx.get_parameter_source(p.name) == ParameterSource.COMMANDLINE
            ]
            if len(given) > 1:
                names = " and ".join(p.flag_name for p in given)
                raise click.UsageError(f"{names} exclude each other; give one", ctx)
        return rest


def _click_type(param: Param, open_files: bool = True) -> Any:
    if param.choices:
        return click.Choice(param.choices, case_sensitive=False)
    if param.type == "int":
        low, high = param.range or (None, None)
        return click.IntRange(low, high)
    if param.type == "file" and open_files:
        return click.File("rb")
    if param.type == "date":
        return click.DateTime(formats=["%Y-%m-%d"])
    if param.type == "path":
        return click.Path(path_type=str)  # made a Path after the empty check: Path("") would be "."
    return str


def _click_params(command: Command, surface: str, open_files: bool = True) -> list[click.Parameter]:
    out: list[click.Parameter] = []
    for p in command.params_for(surface):
        if p.kind == "arg":
            out.append(
                click.Argument(
                    [p.name],
                    required=p.required,
                    type=_click_type(p, open_files),
                    metavar=p.metavar,
                )
            )
        elif p.kind == "rest":
            out.append(
                click.Argument(
                    [p.name], nargs=-1, required=p.required, metavar=p.metavar or p.name.upper()
                )
            )
        elif p.kind == "flag":
            out.append(
                click.Option(
                    [p.flag_name, p.name], is_flag=True, required=p.required, help=_help(p, surface)
                )
            )
        else:
            decls = [p.flag_name, p.name] + ([p.short] if p.short and surface == "cli" else [])
            out.append(
                click.Option(
                    decls,
                    type=_click_type(p, open_files),
                    default=p.default,
                    multiple=p.multiple,
                    metavar=p.metavar,
                    help=_help(p, surface),
                    show_default=p.default is not None,
                )
            )
    if surface == "cli" and command.json:
        out.append(
            click.Option(["--json", "json_output"], is_flag=True, help="Print the result as JSON.")
        )
    return out


def _help(param: Param, surface: str) -> str:
    """An option's help, with its chat form when it has
    one (`rlmap-bot papers by Schulman` works too).
    """
    if not param.word:
        return param.help_on(surface)
    form = (
        param.word
        if param.kind == "flag"
        else f"{param.word} {param.metavar or param.name.upper()}"
    )
    return f"{param.help_on(surface)} (or: {form})"


def click_command(
    command: Command,
    surface: str,
    name: str | None = None,
    callback: Callable[..., Any] | None = None,
    open_files: bool = True,
) -> DeclaredCommand:
    """The declaration as a click command for ``surface`` (the terminal adds its callback).

    ``open_files=False`` reads a file option as its name (to check an example without the file).
    """
    said = command.summary_on(surface)
    summary = said[:1].upper() + said[1:] + "."
    return DeclaredCommand(
        command,
        surface,
        examples=callback is not None,
        name=name or command.words[-1],
        callback=callback,
        params=_click_params(command, surface, open_files),
        help=command.help or summary,
        short_help=summary,
        add_help_option=surface == "cli",
    )


@cache
def _chat_command(command: Command, surface: str, open_files: bool = True) -> DeclaredCommand:
    return click_command(command, surface, open_files=open_files)


def _option_elsewhere(command: Command, surface: str, option: str) -> str | None:
    """Where an option of ``command`` that ``surface``
    lacks works ("--json": from the command line).
    """
    places = set(
        next(
            (
                p.surfaces
                for p in command.params
                if p.kind in ("option", "flag") and p.flag_name == option
            ),
            frozenset(),
        )
    )
    if option == "--json" and command.json:
        places.add("cli")
    places.discard(surface)
    return where_it_works(f"{command.name} {option}", places) if places else None


def parse_words(
    command: Command, words: Iterable[str], surface: str, suggest: bool = True
) -> dict[str, Any]:
    """A chat line's words (after the command's name) as the handler's arguments, read by click.

    Raises :class:`UsageError` naming the option or argument, with the usage line;
    :class:`StrayWords` for words the command does not take. ``suggest`` adds an
    example to a missing-value message; off, the words
    are an example being checked (files are not opened).
    """
    words = list(words)
    parser = _chat_command(command, surface, open_files=suggest)
    usage = command_usage(command, surface)
    try:
        ctx = parser.make_context(
            command.name, list(words), allow_extra_args=True, help_option_names=[]
        )
    except click.NoSuchOption as exc:
        elsewhere = _option_elsewhere(command, surface, exc.option_name)
        if elsewhere:
            raise UsageError(
                f"{exc.option_name} is not an option here; {elsewhere}. {usage}"
            ) from None
        near = f" (did you mean {', '.join(exc.possibilities)}?)" if exc.possibilities else ""
        raise UsageError(f"unknown option {exc.option_name}{near}. {usage}") from None
    except click.BadOptionUsage as exc:
        if "requires" not in exc.message:  # "--quiet=yes": a flag given a value
            raise UsageError(f"{exc.message} {usage}") from None
        raise UsageError(
            f"{_as_typed(command, surface, exc.option_name, words)} needs a value. {usage}"
        ) from None
    except click.MissingParameter as exc:
        param = next(
            (p for p in command.params_for(surface) if exc.param and p.name == exc.param.name), None
        )
        if param is None:
            raise UsageError(f"{exc.format_message()}. {usage}") from None
        prefix = surface_prefix(surface)
        examples = examples_for(command, surface) if suggest else []
        example = f", e.g. `{prefix}{examples[0]}`" if examples else ""
        raise UsageError(
            f"`{prefix}{command.name}` needs {param.metavar or param.name.upper()} "
            f"({param.help_on(surface)}){example}. {usage}"
        ) from None
    except click.ClickException as exc:
        raise UsageError(f"{exc.format_message().rstrip('.')}. {usage}") from None
    if ctx.args:
        raise StrayWords(f"unexpected words: {' '.join(ctx.args)}. {usage}")
    return arguments(command, surface, ctx.params) if suggest else dict(ctx.params)


def _as_typed(command: Command, surface: str, flag: str, words: list[str]) -> str:
    """An option as the person typed it: ``by`` when they wrote the chat word."""
    lowered = [w.lower() for w in words]
    for p in command.params_for(surface):
        if p.flag_name == flag and p.word and flag not in lowered and p.word.lower() in lowered:
            return p.word
    return flag


def arguments(command: Command, surface: str, values: dict[str, Any]) -> dict[str, Any]:
    """click's values as the handler's arguments (words
    joined, files read, dates as dates, paths as Paths).
    """
    args: dict[str, Any] = {}
    for p in command.params_for(surface):
        value = values.get(p.name)
        if p.kind == "rest":
            value = clean(" ".join(value)) if value else None
        elif p.type == "file" and value is not None:
            value = read_text(value)
        elif p.type == "date" and value is not None:
            value = value.date()
        elif isinstance(value, str):
            value = clean(value)
            if not value.strip():  # `--by ""` is a slip, not "no filter"
                raise UsageError(f"{p.label} needs a value, not an empty one")
            if p.type == "path":
                value = Path(value)
        if value is not None and value is not False and value != ():
            args[p.name] = list(value) if isinstance(value, tuple) else value
    return args


def examples_for(command: Command, surface: str) -> list[str]:
    """The examples that are valid on ``surface``: each is parsed as that surface would parse it."""
    import shlex

    fitting = []
    for example in command.examples:
        words = shlex.split(example)[len(command.words) :]
        try:
            parse_words(command, words, surface, suggest=False)
        except UsageError:
            continue
        fitting.append(example)
    return fitting


def clean(text: str) -> str:
    """Text from argv or stdin with undecodable bytes
    replaced, so it can always be printed and serialised.
    """
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def read_text(stream: Any) -> str:
    """A file option's content (``-`` is stdin), as UTF-8 text of at most MAX_INPUT_CHARS."""
    data = (
        stream.buffer.read(MAX_INPUT_CHARS + 1)
        if hasattr(stream, "buffer")
        else stream.read(MAX_INPUT_CHARS + 1)
    )
    name = getattr(stream, "name", "input")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise RlmapError(f"{name} is not UTF-8 text", exit_code=2) from None
    if len(data) > MAX_INPUT_CHARS:
        raise RlmapError(f"{name} is over {MAX_INPUT_CHARS:,} characters", exit_code=2)
    return data
