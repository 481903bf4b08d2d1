"""Conditions: what a watch announces, when a condition is new, and when it is over.

Conditions are keyed so the ledger can say "already announced":

* ``binds:STAGE``: the verdict on the whole run names STAGE as binding; ``tie:A+B``:
  no single stage binds but two or more have strong evidence (the run a
  team most needs to hear about is often one where two stages go bad at once).  At
  most one of these *stage conditions* is open; when the verdict names another, the
  new one opens (a *change*) and the old one closes with it (the change alert says
  so, no separate note).  A tie that settles on one of its own stages *narrows*:
  the stage was already announced in the tie, so nothing new is posted.
* ``fault:NAME`` (``nan``, ``divergence``, and any fault the scan opens): from the
  full-resolution scan (:mod:`rlmap_bot.runs.growing.scan`), which also decides when they
  are over.
* ``stop:reached`` and ``stop:falling``: the run's forecast says when to stop
  (:mod:`rlmap_bot.watch.stopping`); each opens at most once a watch and is never resolved.

Each opening is an *episode* (numbered per watch and key); an episode is
announced once and, if it was announced, resolved once.  A condition that
clears and later comes back is a new episode and is announced again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from rlmap_bot.runs.growing.scan import FaultState
from rlmap_bot.watch.model import ConditionState

#: A binding stage is announced the first time a verdict names it.  The verdict already needs
#: min_score points and a min_lead margin over every other stage (knowledge/catalog.yaml), at
#: least one strong reading, so a second check would delay the news by an interval and re-judge
#: mostly the same recent window.
#: It is resolved only when CLEAR_CHECKS checks in a row that read new steps no longer name it:
#: a single verdict can dip under min_lead (1.25 points, a quarter of one strong reading) on the
#: noise of one recent window, while two verdicts over different data mean the evidence went.
#: Checks that read nothing new do not count: they would repeat the same verdict.
CLEAR_CHECKS = 2
FAULTS = ("nan", "divergence")
STAGE_PREFIXES = ("binds:", "tie:")


def stage_key(binding: str | None, tied: list[str]) -> str | None:
    """The stage condition a verdict names: ``binds:STAGE``, ``tie:A+B`` (sorted), or None."""
    if binding:
        return f"binds:{binding}"
    if len(tied) >= 2:
        return "tie:" + "+".join(sorted(tied))
    return None


def stages_of(key: str) -> set[str]:
    """The stages a stage condition names."""
    return set(key.split(":", 1)[1].split("+"))


@dataclass
class Transition:
    """One change a check found: ``start``, ``change``, ``fault``, ``stop`` (announce),
    ``resolved``, or ``narrowed`` (a tie settled on one of its announced stages: kept, not
    announced again)."""

    kind: str
    condition: ConditionState
    replaced: ConditionState | None = None  # a change: the stage that bound before
    transient: bool = False  # a fault that opened and cleared within the same check


@dataclass
class Evaluation:
    conditions: dict[str, ConditionState]
    episodes: dict[str, int]
    transitions: list[Transition] = field(default_factory=list)


def open_condition(
    key: str, episodes: dict[str, int], now: dt.datetime, step: int | None, **detail
) -> ConditionState:
    episodes[key] = episodes.get(key, 0) + 1
    return ConditionState(key=key, episode=episodes[key], since=now, since_step=step, detail=detail)


def evaluate(
    previous: dict[str, ConditionState],
    episodes: dict[str, int],
    binding: str | None,
    faults: FaultState,
    opened_faults: set[str],
    new_data: bool,
    now: dt.datetime,
    last_step: int | None,
    tied: list[str] | None = None,
    lead: bool = False,
) -> Evaluation:
    """The conditions after a check, and the transitions to announce or resolve.  ``lead``: the
    verdict names its stage on one measurement, with no percentage (``wording.is_lead``); once a
    second reading makes it firm, the stage opens again as a new episode, so the channel that
    was told "may bind" is told it binds, with how sure."""
    conditions = {k: v.model_copy(deep=True) for k, v in previous.items()}
    episodes = dict(episodes)
    out = Evaluation(conditions, episodes)

    # -- the binding stage, or the tie -------------------------------------------------------
    key = stage_key(binding, tied or [])
    current = next((c for k, c in conditions.items() if k.startswith(STAGE_PREFIXES)), None)
    if key is not None and (current is None or current.key != key):
        if current is not None:
            del conditions[current.key]
        new = open_condition(key, episodes, now, last_step, **({"lead": True} if lead else {}))
        conditions[new.key] = new
        if current is not None and current.announced and stages_of(key) < stages_of(current.key):
            new.announced, new.alert_ts = True, current.alert_ts
            out.transitions.append(Transition("narrowed", new, replaced=current))
        else:
            out.transitions.append(
                Transition("change" if current is not None else "start", new, replaced=current)
            )
    elif current is not None and key is not None and current.detail.get("lead") and not lead:
        del conditions[current.key]
        new = open_condition(key, episodes, now, last_step)
        conditions[new.key] = new
        out.transitions.append(Transition("start", new))
    elif current is not None and key is not None:
        current.misses = 0
    elif current is not None and new_data:
        current.misses += 1
        if current.misses >= CLEAR_CHECKS:
            del conditions[current.key]
            out.transitions.append(Transition("resolved", current))

    # -- faults ---------------------------------------------------------------------------------
    known = {k.split(":", 1)[1] for k in conditions if k.startswith("fault:")}
    for name in dict.fromkeys([*FAULTS, *sorted(opened_faults | known)]):
        key = f"fault:{name}"
        fault = getattr(faults, name, None)
        active = bool(getattr(fault, "active", False))
        if name in opened_faults and key not in conditions:
            step = getattr(fault, "first_step", None) or getattr(fault, "step", None)
            new = open_condition(key, episodes, now, step)
            out.transitions.append(Transition("fault", new, transient=not active))
            if active:
                conditions[key] = new
        elif key in conditions and not active:
            out.transitions.append(Transition("resolved", conditions.pop(key)))
    return out


def pending_announcements(
    conditions: dict[str, ConditionState], quiet: bool, transitions: list[Transition]
) -> list[Transition]:
    """Open conditions never announced (a quiet watch
    made loud, a post that failed): announce them now.
    """
    named = {t.condition.key for t in transitions}
    out = []
    for key, cond in conditions.items():
        if cond.announced or key in named:
            continue
        if key.startswith("fault:") or not quiet:
            kind = key.split(":", 1)[0]
            out.append(Transition({"fault": "fault", "stop": "stop"}.get(kind, "start"), cond))
    return out
