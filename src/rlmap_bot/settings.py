"""Every setting the bot reads, from the environment only, in one pydantic-settings model.

The core reads paths and limits from it; the Slack front-end reads tokens. Secrets
are ``SecretStr``: they print as ``**********`` in logs, reprs and errors, and leave
this module only through ``get_secret_value()`` where a client is built. The README's
settings table is checked against these fields by a test.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path
from typing import Literal

from pydantic import (
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from rlmap_bot.errors import ConfigError
from rlmap_bot.paths import VARIABLES as PATH_VARIABLES
from rlmap_bot.paths import Paths, bundled_knowledge

DEFAULT_SCOPES = (
    "app_mentions:read,chat:write,commands,im:history,channels:history,groups:history,users:read,"
    "files:read,files:write,channels:read,groups:read"
)


def parse_roots(value: str | None) -> list[Path]:
    """``RLMAP_RUN_ROOTS``' text as folders: separated
    like PATH, each resolved; empty parts ignored.
    """
    if not value:
        return []
    roots: list[Path] = []
    for part in value.split(os.pathsep):
        part = part.strip()
        if part:
            root = Path(part).expanduser().resolve(strict=False)
            if root not in roots:
                roots.append(root)
    return roots


WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def parse_weekly(text: str) -> tuple[str, int, int]:
    """``mon 07:00`` -> ("mon", 7, 0); ValueError naming what is wrong."""
    parts = text.lower().split()
    if len(parts) != 2 or parts[0][:3] not in WEEKDAYS or ":" not in parts[1]:
        raise ValueError(f"{text!r} is not DAY HH:MM (e.g. mon 07:00, UTC)")
    hour, _, minute = parts[1].partition(":")
    if not (hour.isdigit() and minute.isdigit() and int(hour) < 24 and int(minute) < 60):
        raise ValueError(f"{text!r}: the time must be HH:MM")
    return parts[0][:3], int(hour), int(minute)


class Settings(BaseSettings):
    """Read once per process from the environment; see the README's settings tables."""

    # An empty variable (`RLMAP_HOME=`) means unset, as in most tools, not "the current folder".
    model_config = SettingsConfigDict(
        env_prefix="", case_sensitive=False, extra="ignore", frozen=True, env_ignore_empty=True
    )

    # -- the core -----------------------------------------------------------------------------
    # RLMAP_KNOWLEDGE, RLMAP_HOME and RLMAP_DB are read by rlmap_bot.paths (see ``paths`` below).
    rlmap_state_db: Path | None = Field(default=None, description="the state store file")
    rlmap_state_url: SecretStr | None = Field(
        default=None,
        description="a SQLAlchemy URL for the state store instead of a file (PostgreSQL for "
        "several replicas)",
    )
    rlmap_session_ttl_hours: float = Field(
        default=72.0, gt=0, description="how long a diagnosis may sit unanswered before it expires"
    )
    rlmap_log_format: Literal["text", "json"] = Field(
        default="text", description="log lines as text, or one JSON object a line"
    )
    rlmap_run_roots: str | None = Field(
        default=None,
        description="folders whose training logs may be watched, separated like PATH (':' on "
        "Linux); unset: watching is off",
    )
    rlmap_wandb_entities: str = Field(
        default="",
        description="comma-separated W&B entities whose runs a workspace may read (`*`: any); "
        "unset: none",
    )
    rlmap_mlflow_hosts: str = Field(
        default="",
        description="comma-separated MLflow tracking-server hosts (HOST or HOST:PORT; `*`: any) a "
        "workspace may read; unset: none",
    )
    # An hour: a step takes seconds to minutes, but an
    # evaluation pass or a checkpoint save can keep a
    # log quiet for tens of minutes; an hour without a new step is past those on common set-ups and
    # still early news on a run of days.  Noticed at the first check after it (within one interval).
    # How often a terminal follow (`rlmap-bot watch SOURCE`) reads the run.  Judgement: RL steps
    # take seconds to minutes, so a minute shows each
    # alert within a step or so of a scheduled check.
    rlmap_watch_follow_seconds: float = Field(
        default=60.0,
        gt=0,
        le=24 * 3600,
        description="how often `rlmap-bot watch SOURCE` in a terminal reads the run it follows",
    )
    rlmap_watch_stall_minutes: int = Field(
        default=60,
        ge=5,
        le=7 * 24 * 60,
        description="a watched log with no new steps for this many minutes is reported once and "
        "its watch paused",
    )

    # -- curation -------------------------------------------------------------------------------
    rlmap_arxiv_url: str = Field(
        default="https://export.arxiv.org/api/query",
        description="the arXiv API's query URL (tests point it at a local stand-in)",
    )
    # arXiv's API terms of use ask for at most one request every three seconds.
    rlmap_arxiv_delay_seconds: float = Field(
        default=3.0, ge=0, le=60, description="seconds between two arXiv requests from one process"
    )
    # 10 s: arXiv answers an id look-up in well under a
    # second; ten times that is an outage, not a slow day.
    rlmap_arxiv_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=120,
        description="how long one arXiv request may take before it counts as down",
    )
    rlmap_curator_channel: str | None = Field(
        default=None,
        description="the Slack channel id suggestions go to (`/rlmap curate here` sets one per "
        "workspace)",
    )
    rlmap_curators: str = Field(
        default="", description="comma-separated Slack user ids who approve, edit and reject"
    )
    # 3 s: an approval is live on every replica within
    # a few seconds (the issue asks for seconds), for
    # one indexed count query per replica per poll.
    rlmap_additions_poll_seconds: float = Field(
        default=3.0,
        gt=0,
        le=3600,
        description="how often each replica checks for new approved papers",
    )
    # A minute, doubling to an hour: arXiv's outages are
    # mostly minutes (maintenance windows are announced
    # and short), and an hour between tries keeps a long
    # one from costing more than a request an hour.
    rlmap_suggest_retry_seconds: float = Field(
        default=60.0,
        gt=0,
        le=3600,
        description="first wait before asking arXiv again for a kept suggestion",
    )
    rlmap_scout_schedule: str = Field(
        default="mon 07:00", description="when the weekly scan runs (DAY HH:MM, UTC)"
    )
    rlmap_scout_categories: str = Field(
        default="cs.LG,cs.CL,cs.AI", description="arXiv categories the scan reads"
    )
    rlmap_scout_query: str | None = Field(
        default=None, description="an arXiv query instead of the map's vocabulary"
    )
    rlmap_scout_top: int = Field(
        default=5, ge=0, le=20, description="how many candidates the scan posts (0: off)"
    )
    rlmap_scout_fetch: int = Field(
        default=200, ge=1, le=2000, description="how many newest papers the scan ranks"
    )

    # -- reliability --------------------------------------------------------------------------
    # A replica owns a request it claimed for this long,
    # and renews the lease while it works, so only
    # a replica that stopped renewing for a whole lease (killed, frozen, cut off from the database)
    # loses its requests to another. 30 s: a stalled-but-alive replica (a long GC pause, a slow
    # database) is not taken over needlessly, and lease + sweep keeps recovery well inside a minute
    # and a half. Tests set it to a second or two.
    rlmap_claim_lease_seconds: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="how long a replica owns a request it claimed before another may take it over",
    )
    # How often each replica renews its leases and looks
    # for expired unfinished claims. 5 s: one cheap
    # indexed query per replica every 5 s, and it adds
    # at most 5 s to a recovery; it must be well under
    # the lease (at most a third of it), or a working
    # replica's lease could run out between renewals.
    rlmap_sweep_seconds: float = Field(
        default=5.0,
        gt=0,
        le=600,
        description="how often each replica renews its leases and finishes expired unfinished "
        "requests",
    )
    rlmap_metrics_port: int | None = Field(
        default=None,
        ge=0,
        le=65535,
        description="Socket Mode: serve /metrics, /healthz and /readyz on this port",
    )
    rlmap_encryption_key: SecretStr | None = Field(
        default=None,
        description="Fernet key(s), comma-separated, newest first: encrypts Slack tokens at rest "
        "(OAuth)",
    )

    # -- Slack --------------------------------------------------------------------------------
    slack_bot_token: SecretStr | None = Field(default=None, description="bot token (xoxb-...)")
    slack_app_token: SecretStr | None = Field(
        default=None, description="app-level token for Socket Mode (xapp-...)"
    )
    slack_signing_secret: SecretStr | None = Field(
        default=None, description="signing secret, for HTTP mode"
    )
    slack_api_url: str = Field(default="https://slack.com/api/", description="Web API base URL")
    slack_client_id: str | None = Field(
        default=None, description="OAuth client id: many workspaces (HTTP mode)"
    )
    slack_client_secret: SecretStr | None = Field(default=None, description="OAuth client secret")
    slack_scopes: str = Field(default=DEFAULT_SCOPES, description="bot scopes requested at install")
    slack_redirect_uri: str | None = Field(
        default=None, description="OAuth redirect URL, if not the default"
    )
    rlmap_admins: str = Field(
        default="",
        description="admins besides each workspace's Slack admins and owners, comma-separated, "
        "each WORKSPACE:USER (T0123:U0456); a bare user id counts only with one bot token",
    )
    rlmap_rate_limit_retries: int = Field(
        default=3, ge=0, le=10, description="how many times a 429 is retried"
    )
    rlmap_max_log_mb: int = Field(
        default=200,
        ge=1,
        le=100_000,
        description="the largest training log a Slack diagnosis thread downloads, in MB",
    )

    @field_validator("rlmap_arxiv_url")
    @classmethod
    def _arxiv_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("rlmap_scout_schedule")
    @classmethod
    def _scout_schedule(cls, value: str) -> str:
        parse_weekly(value)  # ValueError says what is wrong
        return value

    @field_validator("slack_api_url")
    @classmethod
    def _trailing_slash(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value if value.endswith("/") else value + "/"

    @field_validator("rlmap_encryption_key")
    @classmethod
    def _fernet_keys(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            from rlmap_bot.crypto import parse_keys

            parse_keys(value.get_secret_value())  # ValueError says what is wrong, never the key
        return value

    @model_validator(mode="after")
    def _sweep_inside_lease(self) -> Settings:
        if self.rlmap_sweep_seconds * 3 > self.rlmap_claim_lease_seconds:
            raise ValueError(
                f"RLMAP_SWEEP_SECONDS ({self.rlmap_sweep_seconds:g}) must be at most a third of "
                f"RLMAP_CLAIM_LEASE_SECONDS ({self.rlmap_claim_lease_seconds:g}): leases are "
                f"renewed at each sweep"
            )
        return self

    @field_validator("rlmap_state_url")
    @classmethod
    def _is_url(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and "://" not in value.get_secret_value():
            raise ValueError(
                "must be a URL such as postgresql+psycopg://user:password@host/db; for a SQLite "
                "file set RLMAP_STATE_DB instead"
            )
        return value

    # -- paths: rlmap_bot.paths owns their variables (a plain ask reads them alone) ---------------
    _paths: Paths = PrivateAttr(default_factory=Paths.from_env)  # read with the other settings

    @property
    def paths(self) -> Paths:
        return self._paths

    @property
    def knowledge_dir(self) -> Path:
        return self.paths.knowledge_dir

    @property
    def data_dir(self) -> Path:
        return self.paths.data_dir

    @property
    def knowledge_db(self) -> Path:
        return self.paths.knowledge_db

    @property
    def state_url(self) -> str:
        """``RLMAP_STATE_URL`` (e.g. PostgreSQL) wins; else
        ``RLMAP_STATE_DB``; else ``state.db`` at home.
        """
        if self.rlmap_state_url is not None:
            return self.rlmap_state_url.get_secret_value()
        return str(
            self.rlmap_state_db.expanduser() if self.rlmap_state_db else self.data_dir / "state.db"
        )

    # -- which setting chose a path, for error lines
    #  ("RLMAP_DB: notes.md is not a knowledge store") --
    def knowledge_source(self, folder: Path) -> str:
        return self.paths.knowledge_source(folder)

    def knowledge_db_source(self, path: Path) -> str:
        return self.paths.knowledge_db_source(path)

    @property
    def state_source(self) -> str:
        """The setting that chose the state store: RLMAP_STATE_URL, RLMAP_STATE_DB or RLMAP_HOME."""
        if self.rlmap_state_url is not None:
            return "RLMAP_STATE_URL"
        return "RLMAP_STATE_DB" if self.rlmap_state_db else "RLMAP_HOME"

    @property
    def run_roots(self) -> list[Path]:
        """The folders watches may read, resolved; empty when watching is off."""
        return parse_roots(self.rlmap_run_roots)

    @property
    def wandb_entities(self) -> tuple[str, ...]:
        """The W&B entities workspaces may read (``*`` for any); empty: W&B runs are refused."""
        return tuple(e.strip() for e in self.rlmap_wandb_entities.split(",") if e.strip())

    @property
    def mlflow_hosts(self) -> tuple[str, ...]:
        """The MLflow tracking-server hosts workspaces may
        read (``*`` for any); empty: servers are refused.
        """
        return tuple(h.strip().lower() for h in self.rlmap_mlflow_hosts.split(",") if h.strip())

    @property
    def watch_stall(self) -> dt.timedelta:
        return dt.timedelta(minutes=self.rlmap_watch_stall_minutes)

    @property
    def claim_lease(self) -> dt.timedelta:
        return dt.timedelta(seconds=self.rlmap_claim_lease_seconds)

    @property
    def session_ttl(self) -> dt.timedelta:
        return dt.timedelta(hours=self.rlmap_session_ttl_hours)

    # -- Slack modes --------------------------------------------------------------------------
    @property
    def oauth(self) -> bool:
        """Many workspaces: installations come from the OAuth flow, not one bot token."""
        return bool(self.slack_client_id)

    @property
    def slack_wanted(self) -> bool:
        """Any Slack credential set means the person wants the Slack app, not the local shell."""
        return bool(self.slack_bot_token or self.slack_client_id)

    @property
    def curators(self) -> set[str]:
        return {c.strip() for c in self.rlmap_curators.split(",") if c.strip()}


def load_settings(**overrides) -> Settings:
    """The settings from the environment (and ``overrides``);
    a bad value is one line naming the variable.
    """
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        first = exc.errors()[0]
        name = ".".join(str(p) for p in first["loc"]).upper()
        message = first["msg"].removeprefix("Value error, ")
        raise ConfigError(f"{name}: {message}" if name else message) from None


def env_names() -> list[str]:
    """Every environment variable the bot's settings read, upper case: the paths
    (:mod:`rlmap_bot.paths`), then the settings model's fields in declaration order."""
    return [*PATH_VARIABLES, *(name.upper() for name in Settings.model_fields)]


__all__ = ["Settings", "load_settings", "bundled_knowledge", "env_names"]
