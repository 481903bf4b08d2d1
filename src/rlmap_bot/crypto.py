"""Secrets at rest: sealed with Fernet under ``RLMAP_ENCRYPTION_KEY``, each marked as sealed.

The setting holds one or more Fernet keys, comma-separated, newest first. The first key seals;
every key opens (``MultiFernet``), so a key is rotated by putting a new one in front, restarting
(every stored value is then sealed again under it) and later dropping the old one.

A sealed value is :data:`SEALED` followed by the Fernet token. The marker, never the value's
shape, says that a value is sealed: a value without it was not written by the bot and is never
used as it is. :data:`LEGACY` is what migration 0010 put in front of every value stored before
markers existed; it is opened once (the key proves it was sealed) and sealed again with the
marker. One that cannot be a Fernet token at all (too short, or not the version byte: a certain
"no", not a guess) is what the older version kept in clear: it is sealed then, loudly.

A value that does not open is one workspace's problem (:class:`UnopenedError`, naming what and
whose, never the value); only when the keys open nothing stored at all is the key wrong
(:class:`WrongKeyError`, which stops a start). Nothing here puts a key or a plain value into a
message.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from rlmap_bot.errors import ConfigError, RlmapError

SEALED = "rlmap:1:"  # this version's seal: a Fernet token under RLMAP_ENCRYPTION_KEY follows
LEGACY = "rlmap:0:"  # migration 0010: stored before markers, not yet proven sealed
MARKER = "rlmap:"  # every marker starts so; what follows up to the next ":" is its version
NEW_KEY_HINT = "make one with `rlmap-bot key new`"
ROTATE_HINT = "to change keys, list the new key first and the old one after it"


def parse_keys(text: str) -> list[bytes]:
    """The Fernet keys in a setting; ValueError naming which one is malformed (never its value)."""
    keys = [part.strip() for part in text.split(",") if part.strip()]
    if not keys:
        raise ValueError(f"is empty; {NEW_KEY_HINT}")
    for i, key in enumerate(keys, 1):
        try:
            Fernet(key)
        except (ValueError, TypeError):
            which = f"key {i} of {len(keys)}" if len(keys) > 1 else "the value"
            raise ValueError(
                f"{which} is not a Fernet key (32 url-safe base64-encoded bytes); {NEW_KEY_HINT}"
            ) from None
    return [k.encode() for k in keys]


def new_key() -> str:
    return Fernet.generate_key().decode()


def derived_key(secret: str, purpose: str) -> bytes:
    """A Fernet key derived from another secret (HKDF-SHA256), one per ``purpose``.

    For the request bodies of Slack claims when no RLMAP_ENCRYPTION_KEY is set: every replica of
    one app holds the same bot token, the state store never does, and HKDF makes a key from
    which the token cannot be worked back.
    """
    raw = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=purpose.encode()).derive(
        secret.encode()
    )
    return base64.urlsafe_b64encode(raw)


def marked(value: str | None) -> bool:
    """Whether a value carries a seal marker (of any version): the only test of "sealed"."""
    return bool(value) and str(value).startswith(MARKER)


@dataclass(frozen=True)
class Secret:
    """What a stored value is and whose, for messages: never the value itself."""

    kind: str  # "Slack bot token", "W&B API key", ...
    team: str
    remedy: str = ""  # what fixes it when it does not open, as a clause
    keys: str = "RLMAP_ENCRYPTION_KEY"  # where the keys that should open it come from

    def __str__(self) -> str:
        return f"the {self.kind} of workspace {self.team}"


class UnopenedError(RlmapError):
    """One stored value does not open: that workspace's problem, named, never the value.

    ``keyed``: the keys failed on a value marked sealed (a wrong key would do that), as opposed
    to a value that is not sealed at all or in an unknown form (no key would open it).
    """

    def __init__(self, secret: Secret, why: str, keyed: bool = False):
        self.secret, self.why, self.keyed = secret, why, keyed
        remedy = f"; {secret.remedy}" if secret.remedy else ""
        super().__init__(f"{secret} does not open with {secret.keys}: {why}{remedy}")


class WrongKeyError(ConfigError):
    """No configured key opens anything stored: the key is wrong (a start stops on it)."""


class TokenCipher:
    """Seals and opens values with the configured keys (the first seals, every one opens)."""

    def __init__(self, keys: list[bytes]):
        self.primary = Fernet(keys[0])
        self.any = MultiFernet([Fernet(k) for k in keys])

    @classmethod
    def from_setting(cls, text: str) -> TokenCipher:
        return cls(parse_keys(text))

    def seal(self, value: str | None) -> str | None:
        """The value sealed under the first key, marked. Every value is sealed, whatever it
        looks like (None and "" hold nothing and stay as they are)."""
        if not value:
            return value
        return SEALED + self.primary.encrypt(value.encode()).decode()

    def open(self, value: str | None, secret: Secret) -> str | None:
        """The plain value; :class:`UnopenedError` (naming ``secret``) when it does not open."""
        if not value:
            return value
        version, token = _split(value, secret)
        try:
            return self.any.decrypt(token.encode()).decode()
        except InvalidToken:
            raise UnopenedError(secret, _why(version), keyed=True) from None

    def opens(self, value: str | None) -> bool:
        try:
            self.open(value, Secret("value", ""))
        except UnopenedError:
            return False
        return True

    def reseal(self, value: str | None, secret: Secret) -> str | None:
        """The value sealed again under the first key with this version's marker, or None when
        it is so already. :class:`UnopenedError` when it does not open."""
        if not value:
            return None
        version, token = _split(value, secret)
        if version == SEALED:
            try:
                self.primary.decrypt(token.encode())
                return None
            except InvalidToken:
                pass
        return self.seal(self.open(value, secret))


def _split(value: str, secret: Secret) -> tuple[str, str]:
    """(marker, Fernet token) of a stored value; UnopenedError for a value without our marker."""
    for version in (SEALED, LEGACY):
        if value.startswith(version):
            return version, value[len(version) :]
    if value.startswith(MARKER):
        found = value[: value.find(":", len(MARKER)) + 1] or MARKER
        raise UnopenedError(secret, f"it is sealed in a form this version does not know ({found})")
    raise UnopenedError(
        secret, "it is stored in clear, without the bot's seal (the bot never writes it so)"
    )


def _why(version: str) -> str:
    if version == LEGACY:
        return "no configured key opens it (an older version sealed it, under another key)"
    return "no configured key opens it"


# -- at start: every stored value sealed again under the first key ---------------------------------
CHECK_TEXT = "rlmap-bot key check"  # what the key check seals: any text; opening it proves the key


@dataclass
class Resealing:
    """What a start found: values to write sealed again, values that do not open, the check."""

    fresh: list[tuple[int, str]]  # (index of the stored value, that value sealed again)
    unopened: list[UnopenedError]
    check: str | None  # a key check to store, or None when the stored one is current
    from_clear: list[Secret] = field(default_factory=list)  # kept in clear by an older version


def not_fernet(token: str) -> bool:
    """Whether ``token`` cannot be a Fernet token: not base64, or not the version byte 0x80 and
    the 57 bytes of framing plus whole 16-byte blocks a Fernet token always has. A certain "no"
    (the converse, "it is one", is never concluded from the shape)."""
    try:
        data = base64.urlsafe_b64decode(token.encode())
    except (ValueError, TypeError):
        return True
    return not data or data[0] != 0x80 or len(data) < 73 or (len(data) - 57) % 16 != 0


def reseal_all(
    cipher: TokenCipher, stored: list[tuple[Secret, str]], check: str | None
) -> Resealing:
    """Seal every stored value again under the first key with the current marker.

    The key is wrong (:class:`WrongKeyError`, and nothing is written) when the keys open nothing
    marked sealed: no stored value and not the key check sealed at an earlier start. With the key
    check open, a value that does not open is its workspace's alone: it is reported, not fatal.
    """
    fresh: list[tuple[int, str]] = []
    unopened: list[UnopenedError] = []
    from_clear: list[Secret] = []
    opened = 0
    for i, (secret, value) in enumerate(stored):
        if value.startswith(LEGACY) and not_fernet(value[len(LEGACY) :]):
            from_clear.append(secret)  # the older version kept it as it was given
            fresh.append((i, cipher.seal(value[len(LEGACY) :]) or ""))
            continue
        try:
            new = cipher.reseal(value, secret)
        except UnopenedError as exc:
            unopened.append(exc)
            continue
        opened += 1
        if new is not None:
            fresh.append((i, new))
    check_opens = check is not None and cipher.opens(check)
    keyed = [e for e in unopened if e.keyed]
    if not opened and not check_opens and (keyed or (check is not None and stored)):
        raise wrong_key(keyed)
    current = check_opens and cipher.reseal(check, Secret("key check", "")) is None
    return Resealing(fresh, unopened, None if current else cipher.seal(CHECK_TEXT), from_clear)


def wrong_key(unopened: list[UnopenedError]) -> WrongKeyError:
    """The one line a start stops on: what the keys failed to open, for whom, never a value."""
    kinds: dict[str, set[str]] = {}
    for error in unopened:
        kinds.setdefault(error.secret.kind, set()).add(error.secret.team)
    said = "; ".join(
        f"the {kind} of workspace{'s' if len(teams) > 1 else ''} {', '.join(sorted(teams))}"
        for kind, teams in sorted(kinds.items())
    )
    return WrongKeyError(
        f"RLMAP_ENCRYPTION_KEY opens nothing sealed in the state store "
        f"({said or 'not even the key check sealed at the last start'}); start with the key they "
        f"were sealed under ({ROTATE_HINT})"
    )
