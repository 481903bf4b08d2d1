"""What a person may type to name an arXiv paper, reduced to its id.

An id (``2305.18290``, ``2305.18290v2``, ``arXiv:2305.18290``), an abs or pdf URL on
arxiv.org, or the DOI arXiv registers for every paper (``10.48550/arXiv.2305.18290``, bare
or as a doi.org URL). Only new-style ids (April 2007 on) fit the catalog's ``arxiv`` field;
anything else is one line that says what would work.
"""

from __future__ import annotations

import re
from urllib.parse import urlparse

from rlmap_bot.errors import UsageError

# arXiv's identifier scheme (arxiv.org/help/arxiv_identifier): new-style ids are YYMM.NNNN from
# April 2007 (0704) to December 2014, YYMM.NNNNN from January 2015 (1501), each optionally with a
# version (v2); old-style ids are archive(.SUBJECT)/YYMMNNN, from August 1991 to March 2007.
NEW_SHAPE = re.compile(r"^(\d{4})\.(\d{4,5})(v\d+)?$")
OLD_ID = re.compile(r"^[a-z-]+(\.[A-Za-z]{2})?/(\d{2})(\d{2})\d{3}(v\d+)?$")
NEW_STYLE_FROM = 704  # April 2007, as YYMM
FIVE_DIGITS_FROM = 1501  # January 2015: the number after the dot has five digits from then
ARXIV_DOI = re.compile(r"^10\.48550/arxiv\.(.+)$", re.IGNORECASE)
ARXIV_HOSTS = {"arxiv.org", "www.arxiv.org", "export.arxiv.org"}
SHOWN = 80  # how much of a bad reference is echoed back: enough to recognise it
EXAMPLE = (
    "an arXiv id (2305.18290), an arxiv.org/abs or /pdf URL, or arXiv's DOI "
    "(10.48550/arXiv.2305.18290)"
)


def shown(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def parse_reference(text: str) -> str:
    """The new-style arXiv id (no version) that ``text``
    names; UsageError saying what would work.
    """
    raw = (text or "").strip().strip("<>")
    if not raw:
        raise UsageError(f"suggest needs {EXAMPLE}")
    if "|" in raw:  # Slack's <url|label> link markup
        raw = raw.split("|", 1)[0]
    if raw.lower().startswith(tuple(h + "/" for h in (*ARXIV_HOSTS, "doi.org", "dx.doi.org"))):
        raw = "https://" + raw  # a link as Slack shows it (its label), without the scheme
    candidate = raw
    lowered = raw.lower()
    if lowered.startswith(("http://", "https://")):
        url = urlparse(raw)
        host = (url.hostname or "").lower()
        path = url.path.strip("/")
        if host in {"doi.org", "dx.doi.org"}:
            candidate = path
        elif host in ARXIV_HOSTS:
            parts = path.split("/", 1)
            if len(parts) != 2 or parts[0] not in {"abs", "pdf"}:
                raise UsageError(
                    f"{shown(raw)!r} is an arxiv.org address but not a paper's abs or pdf page; "
                    f"give {EXAMPLE}"
                )
            candidate = parts[1].removesuffix(".pdf")
        else:
            raise UsageError(f"{shown(raw)!r} is not on arxiv.org or doi.org; give {EXAMPLE}")
    if candidate.lower().startswith("doi:"):
        candidate = candidate[4:].strip()
    if candidate.startswith("10."):
        doi = ARXIV_DOI.match(candidate)
        if doi is None:
            raise UsageError(
                f"{shown(candidate)!r} is not a DOI arXiv registered (those start "
                f"10.48550/arXiv.); give the paper's arXiv id instead"
            )
        candidate = doi.group(1)
    if candidate.lower().startswith("arxiv:"):
        candidate = candidate[6:].strip()
    found = NEW_SHAPE.match(candidate)
    if found:
        return _checked(found.group(1), found.group(2))
    old = OLD_ID.match(candidate)
    if old and 1 <= int(old.group(3)) <= 12:
        raise UsageError(
            f"{shown(candidate)!r} is an arXiv id from before April 2007; the catalog takes "
            "new-style ids (YYMM.NNNNN) only"
        )
    raise UsageError(f"{shown(raw)!r} is not an arXiv id; give {EXAMPLE}")


def _checked(yymm: str, number: str) -> str:
    """A new-style id whose month exists and whose number has the digits of its time: four before
    2015, five from then ("2402.0330" is a digit short; "1412.00001" a digit long)."""
    arxiv_id = f"{yymm}.{number}"
    month = int(yymm[2:])
    if not 1 <= month <= 12 or int(yymm) < NEW_STYLE_FROM:
        raise UsageError(
            f"{arxiv_id!r} is not an arXiv id: its first four digits are the year and month (YYMM, "
            f"from 0704); give {EXAMPLE}"
        )
    digits = 5 if int(yymm) >= FIVE_DIGITS_FROM else 4
    if len(number) != digits:
        era = "from 2015 on" if digits == 5 else "before 2015"
        raise UsageError(
            f"{arxiv_id!r} is not an arXiv id: ids {era} have {digits} digits after the dot "
            f"(YYMM.{'N' * digits}), e.g. {'2305.18290' if digits == 5 else '1412.6980'}"
        )
    return arxiv_id
