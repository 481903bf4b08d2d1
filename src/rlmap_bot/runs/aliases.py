"""The metric-name -> quantity alias table: curated knowledge in ``knowledge/metrics/*.yaml``.

Each file covers one framework.  An entry names a metric (exactly, or with
``*`` standing for any run of characters other than ``/``), the quantity it
measures, its unit, and how to combine it with other metrics of the same step
(``add``, ``divide_by``); ``**`` matches across ``/``.
A curator adds a framework by adding a file; the
quantities and units are the fixed vocabulary the derivation code understands.
Errors are the catalog's :class:`KnowledgeError`, naming file, entry and field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Iterable, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    model_validator,
)

from rlmap_bot.knowledge.loader import KnowledgeError

METRICS_FOLDER = "metrics"

#: What a metric can measure, and what each means.  Derivation code reads these names.
QUANTITIES: dict[str, str] = {
    "task_reward": "mean task reward of training rollouts (the verifier or reward model score)",
    "task_pass_rate": "share of training rollouts the task's own check passes (a reward's "
    "correctness part, without a format bonus)",
    "heldout_score": "score on held-out validation data (sparse: every few steps)",
    "entropy": "mean per-token entropy of sampled responses",
    "response_length": "mean response length in tokens",
    "truncation": "share of responses cut at the maximum length",
    "trainer_idle": "share of the trainer's step spent waiting for rollouts",
    "env_time_share": "share of rollout time spent in the environment (tools, sandboxes) rather "
    "than generation",
    "time_generation": "seconds spent generating rollouts per step",
    "time_step": "seconds per training step",
    "grad_norm": "global gradient norm",
    "clip_fraction": "share of tokens whose probability ratio was clipped",
    "kl_reference": "KL divergence of the policy from the reference model",
    "kl_loss": "the KL-to-reference loss term",
    "kl_loss_coef": "the coefficient the KL loss term is multiplied by",
    "policy_loss": "the policy-gradient loss",
    "loss": "the total training loss",
    "zero_std_fraction": "share of prompts whose sampled responses all got the same reward",
    "zero_std_count": "number of prompt groups whose responses all got the same reward",
    "epoch": "passes over the training prompts",
    "staleness": "policy versions between the weights that sampled a rollout and the weights "
    "trained on it",
    "mismatch_kl": "KL between trainer and inference-engine probabilities of the same tokens",
    "learning_rate": "the optimiser's learning rate (0 on every step: no parameter changes)",
}
if (
    TYPE_CHECKING
):  # a Literal built from the table above is checked by pydantic at run time, not by mypy
    Quantity = str
else:
    Quantity = Literal[tuple(QUANTITIES)]

#: Units; ``percent`` values are divided by 100, ``nats_per_token`` KL is scaled by response length.
UNITS = (
    "fraction",
    "percent",
    "seconds",
    "tokens",
    "nats",
    "nats_per_token",
    "reward",
    "score",
    "epochs",
    "epoch_index",
    "steps",
    "count",
    "norm",
    "loss",
    "coefficient",
)
if TYPE_CHECKING:
    Unit = str
else:
    Unit = Literal[UNITS]

#: Quantities that are shares of something: the unit must say fraction or percent.
SHARE_QUANTITIES = {
    "task_pass_rate",
    "truncation",
    "trainer_idle",
    "env_time_share",
    "clip_fraction",
    "zero_std_fraction",
}
UNITS_FOR = {
    **{q: {"fraction", "percent"} for q in SHARE_QUANTITIES},
    "kl_reference": {"nats", "nats_per_token"},
    "epoch": {"epochs", "epoch_index"},
    "time_generation": {"seconds"},
    "time_step": {"seconds"},
    "response_length": {"tokens"},
    "staleness": {"steps"},
    "zero_std_count": {"count"},
}

_NAME = r"[^\s*]+"
MetricName = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=300, pattern=r"^[^\s]+$")
]
ExactName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=300, pattern=rf"^{_NAME}$"),
]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class MetricAlias(BaseModel):
    """One metric name (or pattern) and the quantity it measures."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    metric: MetricName = Field(
        description="exact name, or a pattern: * matches within one /-part, ** across parts"
    )
    quantity: Quantity
    unit: Unit
    version: Text | None = Field(
        default=None, description="framework version or label, e.g. '2025+'"
    )
    add: list[ExactName] = Field(
        default_factory=list, description="metrics of the same step added to this one"
    )
    divide_by: list[ExactName] = Field(
        default_factory=list, description="metrics of the same step whose sum divides this one"
    )
    complement: bool = Field(
        default=False, description="the quantity is 1 minus this share (after percent -> fraction)"
    )
    exclude: list[ExactName] = Field(
        default_factory=list, description="names the pattern must not match"
    )
    aggregate: Literal["mean", "sum"] = Field(
        default="mean", description="how several metrics matched by one pattern are combined"
    )
    includes_coef: bool = Field(
        default=False, description="kl_loss already multiplied by its coefficient"
    )
    note: Text | None = None

    @model_validator(mode="after")
    def _consistent(self) -> MetricAlias:
        allowed = UNITS_FOR.get(self.quantity)
        if self.divide_by and self.quantity in SHARE_QUANTITIES:
            allowed = {"fraction"}  # a ratio of two like quantities is a plain share
        if allowed and self.unit not in allowed:
            raise ValueError(
                f"unit '{self.unit}' does not fit quantity '{self.quantity}'; use "
                f"{' or '.join(sorted(allowed))}"
            )
        if self.complement and self.quantity not in SHARE_QUANTITIES:
            raise ValueError("complement only applies to share quantities")
        if self.exclude and "*" not in self.metric:
            raise ValueError("exclude only applies to a pattern (a metric with *)")
        if self.includes_coef and self.quantity != "kl_loss":
            raise ValueError("includes_coef only applies to quantity 'kl_loss'")
        return self


class AliasFile(BaseModel):
    """One framework's file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    framework: Annotated[
        str, StringConstraints(pattern=r"^[a-z0-9]+(?:[-_][a-z0-9]+)*$", max_length=40)
    ]
    title: Text
    sources: list[Text] = Field(
        min_length=1, description="where the names were checked (files in the framework's source)"
    )
    aliases: list[MetricAlias] = Field(min_length=1)


@dataclass(frozen=True)
class Alias:
    """A metric-name entry with its framework, its place in the file and its compiled pattern."""

    framework: str
    order: int
    entry: MetricAlias
    regex: re.Pattern[str] | None

    def matches(self, name: str) -> bool:
        if self.regex is None:
            return name == self.entry.metric
        return self.regex.match(name) is not None and name not in self.entry.exclude

    @property
    def label(self) -> str:
        version = f" {self.entry.version}" if self.entry.version else ""
        return f"{self.framework}{version}"


class AliasTable:
    """Every alias, with fast look-ups for readers (which names to keep) and derivation."""

    def __init__(self, aliases: Iterable[Alias]):
        self.aliases: list[Alias] = list(aliases)
        self._exact: dict[str, list[Alias]] = {}
        self._patterns: list[Alias] = []
        self._helpers: set[str] = set()
        for alias in self.aliases:
            if alias.regex is None:
                self._exact.setdefault(alias.entry.metric, []).append(alias)
            else:
                self._patterns.append(alias)
            self._helpers.update(alias.entry.add)
            self._helpers.update(alias.entry.divide_by)

    @property
    def frameworks(self) -> list[str]:
        return sorted({a.framework for a in self.aliases})

    def lookup(self, name: str) -> list[Alias]:
        """Aliases whose metric is ``name`` or whose pattern matches it, in table order."""
        hits = list(self._exact.get(name, ()))
        hits += [a for a in self._patterns if a.matches(name)]
        return sorted(hits, key=lambda a: (a.framework, a.order))

    def wants(self, name: str) -> bool:
        """Whether a reader should keep this metric's series."""
        return (
            name in self._exact
            or name in self._helpers
            or any(a.matches(name) for a in self._patterns)
        )


def _compile(metric: str) -> re.Pattern[str] | None:
    """``*`` matches within one /-separated part, ``**``
    across parts (data sources like openai/gsm8k).
    """
    if "*" not in metric:
        return None
    out = []
    for chunk in metric.split("**"):
        out.append("[^/]*".join(re.escape(part) for part in chunk.split("*")))
    return re.compile("^" + ".+?".join(out) + "$")


def _shown(path: Path, root: Path) -> str:
    try:
        return root.name + "/" + path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _field(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + str(part))
    return out


def parse_alias_file(data: object, shown: str) -> AliasFile:
    """Validate one file's content; errors name the file, the entry (metric) and the field."""
    if not isinstance(data, dict):
        raise KnowledgeError(
            shown, None, None, "must be a mapping with framework, title, sources and aliases"
        )
    try:
        return AliasFile.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
        loc = tuple(first["loc"])
        problem = first["msg"].removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            problem = "unknown field (check the spelling)"
        elif first["type"] == "missing":
            problem = "missing (required)"
        elif first["type"] == "literal_error" and len(loc) >= 3 and loc[2] == "quantity":
            problem = f"unknown quantity; one of {', '.join(QUANTITIES)}"
        elif first["type"] == "literal_error" and len(loc) >= 3 and loc[2] == "unit":
            problem = f"unknown unit; one of {', '.join(UNITS)}"
        entry = None
        if len(loc) >= 2 and loc[0] == "aliases" and isinstance(loc[1], int):
            raw = data.get("aliases")
            item = raw[loc[1]] if isinstance(raw, list) and loc[1] < len(raw) else None
            metric = item.get("metric") if isinstance(item, dict) else None
            entry = str(metric) if metric else f"#{loc[1] + 1}"
            loc = loc[2:]
        raise KnowledgeError(shown, entry, _field(loc) or None, problem) from None


def load_aliases(knowledge_root: Path | str) -> AliasTable:
    """Read and validate ``knowledge_root/metrics/*.yaml``
    into one table (the ``kb check`` hook).
    """
    root = Path(knowledge_root)
    folder = root / METRICS_FOLDER
    if not folder.is_dir():
        raise KnowledgeError(_shown(folder, root), None, None, "metric alias folder not found")
    aliases: list[Alias] = []
    frameworks: dict[str, str] = {}
    files = sorted(p for p in folder.iterdir() if p.suffix in {".yaml", ".yml"} and p.is_file())
    if not files:
        raise KnowledgeError(
            _shown(folder, root), None, None, "no alias files; add one YAML file per framework"
        )
    for path in files:
        shown = _shown(path, root)
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise KnowledgeError(shown, None, None, f"cannot read file: {exc}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f" at line {mark.line + 1}" if mark is not None else ""
            raise KnowledgeError(
                shown, None, None, f"not valid YAML{where}: {getattr(exc, 'problem', None) or exc}"
            ) from None
        parsed = parse_alias_file(data, shown)
        if parsed.framework in frameworks:
            raise KnowledgeError(
                shown,
                None,
                "framework",
                f"'{parsed.framework}' is already described in {frameworks[parsed.framework]}",
            )
        frameworks[parsed.framework] = shown
        seen: dict[tuple[str, str, str | None], str] = {}
        for index, entry in enumerate(parsed.aliases):
            key = (entry.metric, entry.quantity, entry.version)
            if key in seen:
                raise KnowledgeError(
                    shown,
                    entry.metric,
                    "metric",
                    f"listed twice for quantity '{entry.quantity}'"
                    + (f" and version '{entry.version}'" if entry.version else ""),
                )
            seen[key] = shown
            aliases.append(Alias(parsed.framework, index, entry, _compile(entry.metric)))
    return AliasTable(aliases)


def default_aliases() -> AliasTable:
    """The metric-name table of the configured knowledge folder (``RLMAP_KNOWLEDGE`` or the
    bundled one), for a caller that was handed none."""
    from rlmap_bot.paths import Paths

    return load_aliases(Paths.from_env().knowledge_dir)
