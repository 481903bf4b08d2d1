"""What the Slack app seals: stored secrets checked and sealed again at start, request bodies.

At start (:func:`seal_at_start`), every sealed value in the state store (the workspaces' Slack
tokens with OAuth, their tracker credentials) is opened with ``RLMAP_ENCRYPTION_KEY`` and
sealed again under the first key with the current marker, so after a rotation the old key can be
dropped and values an older version stored get the marker. A value that does not open is logged
for its workspace (what it is and whose, never the value) and never used; the start stops, in
one line, only when the keys open nothing at all, the key check of the last start included
(:func:`rlmap_bot.crypto.reseal_all`).

A claim keeps the request Slack sent until it is answered, so that another replica can answer
it if this one dies; :func:`claims_cipher` seals that body. It seals under
``RLMAP_ENCRYPTION_KEY`` when set; without one (a single workspace, where the key is optional)
under a key derived from the bot token, which every replica of the app holds and the state
store never does. Either way no request text (a key typed after ``/rlmap credentials set``, a
mistyped command, anything) is written in clear.
"""

from __future__ import annotations

import logging
from typing import Any

from rlmap_bot.crypto import TokenCipher, derived_key, parse_keys, reseal_all
from rlmap_bot.errors import ConfigError
from rlmap_bot.settings import Settings

log = logging.getLogger(__name__)

#: The HKDF purpose of the claims' key derived from the bot token (a new one makes a new key).
CLAIMS_PURPOSE = "rlmap-bot claim bodies v1"


def cipher_of(settings: Settings) -> TokenCipher | None:
    key = settings.rlmap_encryption_key
    return TokenCipher.from_setting(key.get_secret_value()) if key is not None else None


def claims_cipher(settings: Settings) -> TokenCipher:
    """Seals claim bodies under RLMAP_ENCRYPTION_KEY (first), else the bot token's derived key.

    The derived key also opens when a key is configured, so a body sealed just before
    RLMAP_ENCRYPTION_KEY was first set is still answered after the restart.
    """
    keys = (
        parse_keys(settings.rlmap_encryption_key.get_secret_value())
        if settings.rlmap_encryption_key is not None
        else []
    )
    if settings.slack_bot_token is not None:
        keys.append(derived_key(settings.slack_bot_token.get_secret_value(), CLAIMS_PURPOSE))
    if not keys:
        raise ConfigError(
            "requests are kept sealed until answered: set RLMAP_ENCRYPTION_KEY (`rlmap-bot key "
            "new` makes one) or SLACK_BOT_TOKEN"
        )
    return TokenCipher(keys)


def seal_at_start(settings: Settings, state: Any, installations: Any = None) -> int:
    """Seal every stored secret again under the first key; return how many were written.

    :class:`~rlmap_bot.crypto.WrongKeyError` (one line, nothing written) when the keys open
    nothing; each value that does not open is logged once, naming what and whose.
    """
    cipher = cipher_of(settings)
    if cipher is None:  # nothing can be opened, so nothing is read: values wait for their key
        return 0
    sources = [state.credentials] + ([installations] if installations is not None else [])
    stored = [(source, *item) for source in sources for item in source.stored()]
    found = reseal_all(cipher, [(s, v) for _, s, v, _ in stored], state.credentials.key_check())
    written = 0
    for i, fresh in found.fresh:
        source, _, old, where = stored[i]
        written += source.replace(where, old, fresh)
    for problem in found.unopened:
        log.warning("%s; it is not used until then", problem)
    for secret in found.from_clear:
        log.warning(
            "%s was kept in clear by an older version: sealed now; rotate it if copies of the "
            "state store (backups, dumps) may exist",
            secret,
        )
    if found.check is not None:
        state.credentials.set_key_check(found.check)
    if written:
        log.info("sealed %d stored value(s) again under the first RLMAP_ENCRYPTION_KEY", written)
    return written
