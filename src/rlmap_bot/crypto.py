"""Secrets at rest: Slack tokens encrypted with Fernet under ``RLMAP_ENCRYPTION_KEY``.

The setting holds one or more Fernet keys, comma-separated, newest first. The
first key encrypts; every key decrypts (``MultiFernet``), so a key is rotated by
putting a new one in front, restarting (every stored token is then re-encrypted
under it) and later dropping the old one. Nothing here ever puts a key or a
plain token into a message.
"""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from rlmap_bot.errors import ConfigError

# Every Fernet token starts with its version byte 0x80 and a 64-bit timestamp whose high bytes are
# zero for centuries yet: base64 "gAAAAA". Slack tokens start with "xox"; nothing else is stored.
SEALED_PREFIX = "gAAAAA"
NEW_KEY_HINT = "make one with `rlmap-bot key new`"


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


def sealed(value: str | None) -> bool:
    return bool(value and value.startswith(SEALED_PREFIX))


class WrongKeyError(ConfigError):
    """A stored secret does not decrypt with any configured key."""


class TokenCipher:
    def __init__(self, keys: list[bytes]):
        self.primary = Fernet(keys[0])
        self.any = MultiFernet([Fernet(k) for k in keys])

    @classmethod
    def from_setting(cls, text: str) -> TokenCipher:
        return cls(parse_keys(text))

    def seal(self, value: str | None) -> str | None:
        """Encrypt under the first key (a value already sealed is left as it is)."""
        if value is None or sealed(value):
            return value
        return self.primary.encrypt(value.encode()).decode()

    def open(self, value: str | None) -> str | None:
        """Decrypt with whichever key fits; a plain value
        (stored before encryption) comes back as it is.
        """
        if value is None or not sealed(value):
            return value
        try:
            return self.any.decrypt(value.encode()).decode()
        except InvalidToken:
            raise WrongKeyError(
                "RLMAP_ENCRYPTION_KEY does not decrypt the Slack tokens stored in the state store; "
                "start with the "
                "key they were saved under (to change keys, list the new key first and the old one "
                "after it)"
            ) from None

    def reseal(self, value: str | None) -> str | None:
        """The value sealed under the first key, or None
        when it already is (plain values get sealed).
        """
        if value is None:
            return None
        if not sealed(value):
            return self.seal(value)
        try:
            self.primary.decrypt(value.encode())
            return None
        except InvalidToken:
            pass
        self.open(value)  # raises WrongKeyError when no key fits
        return self.any.rotate(value.encode()).decode()
