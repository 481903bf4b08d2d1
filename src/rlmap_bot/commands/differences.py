"""Which readings differ between runs compared, in a sentence a user can read.

Each run's own derivation (the readings ``diagnose --run`` gives) is set beside the others': first a
fault found in some runs and not in others, with the step it began at ("Loss NaN/inf: B from step
300; A none"), then a signal read one way in one run and another way in another, named by its title
in the knowledge store and written in its own unit ("Trainer wait for rollouts: A 5%, B 9% (steps
750-1000)"). The signal's id stays in the result, for ``--json``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Protocol, Sequence

if TYPE_CHECKING:
    from rlmap_bot.knowledge.schema import Signal
    from rlmap_bot.results.scaling import Difference
    from rlmap_bot.runs.signals import Derivation

#: Judgement: two numbers less than a quarter apart (of the larger) read alike to a person
#: comparing runs; the readings' own noise bands are wider than that on most logged signals.
ALIKE = 0.25


class Compared(Protocol):
    label: str
    derivation: Derivation


def differences(picked: Sequence[Compared], signals: Mapping[str, Signal]) -> list[Difference]:
    """The readings that differ between the runs ``picked``, faults first; ``signals`` is the
    knowledge store's signals by id (their titles, types and units)."""
    from rlmap_bot.results.scaling import Difference

    found = []
    kinds = dict.fromkeys(f.kind for p in picked for f in p.derivation.faults)
    for kind in kinds:
        seen = {
            p.label: next((f for f in p.derivation.faults if f.kind == kind), None) for p in picked
        }
        if all(f is not None for f in seen.values()):
            continue  # in every run: no difference between them
        title = next(f.title for f in seen.values() if f is not None)
        when = {
            label: "none"
            if f is None
            else ("on every step" if f.throughout else f"from step {f.first_step}")
            + f" ({f.metric})"
            for label, f in seen.items()
        }
        found.append(Difference(reading=title, values=when))
    for signal in sorted({s for p in picked for s in p.derivation.signals}):
        values = {p.label: p.derivation.signals.get(signal) for p in picked}
        known = signals.get(signal)
        shown = {k: shown_value(v, known) for k, v in values.items() if v is not None}
        if len(shown) < 2 or len(set(shown.values())) == 1:
            continue
        numbers = [v for v in values.values() if v is not None]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers):
            nums = [float(v) for v in numbers]
            top = max(abs(n) for n in nums) or 1.0
            if (max(nums) - min(nums)) / top < ALIKE:
                continue
        windows = {}
        for p in picked:
            src = p.derivation.signal_sources.get(signal)
            if src is not None and p.label in shown and src.start is not None:
                windows[p.label] = (
                    f"steps {src.start}-{src.end}" if src.end != src.start else f"step {src.start}"
                )
        window = None
        if len(set(windows.values())) == 1 and len(windows) == len(shown):
            window = next(iter(windows.values()))  # one window for all: said once
        else:
            for label, where in windows.items():
                shown[label] += f" ({where})"
        found.append(
            Difference(
                reading=known.title if known is not None else signal.replace("_", " "),
                signal=signal,
                values=shown,
                window=window,
            )
        )
    return found


def shown_value(value: Any, signal: Signal | None) -> str:
    """A reading in its signal's own terms: a fraction as a percentage, a yes or no, a number with
    its unit (a multiple written "1.8x"), a list of words."""
    kind = signal.type if signal is not None else None
    unit = signal.unit if signal is not None else None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)) and kind == "fraction":
        percent = 100 * float(value)  # two figures under 10% (1.4% and 2.1%, not 1% and 2%)
        return f"{percent:.0f}%" if abs(percent) >= 10 else f"{percent:.2g}%"
    if isinstance(value, float):
        text = f"{value:.3g}"
    elif isinstance(value, list):
        return ", ".join(str(v).replace("_", " ") for v in value) or "none"
    elif isinstance(value, str):
        return value.replace("_", " ")
    else:
        text = str(value)
    if unit == "x":
        return f"{text}x"
    return f"{text} {unit}" if unit else text
