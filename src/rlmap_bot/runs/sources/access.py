"""The :class:`Access` a reader gets: the terminal's own,
or a workspace's from settings and the state store.

In a terminal the person reads with their own environment: any W&B entity or MLflow host, and the
credentials the trackers' own variables hold (``WANDB_API_KEY``, ``MLFLOW_TRACKING_TOKEN``, ...).
A workspace reads only what the settings allow (``RLMAP_RUN_ROOTS``, ``RLMAP_WANDB_ENTITIES``,
``RLMAP_MLFLOW_HOSTS``) with the credentials an admin sealed for that workspace; the process's
own ``WANDB_API_KEY`` or MLflow token is never lent to a workspace.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Mapping

from rlmap_bot.runs.sources import Access
from rlmap_bot.runs.sources.remote import ANY

if TYPE_CHECKING:
    from rlmap_bot.settings import Settings
    from rlmap_bot.state.store import StateStore

#: Where each tracker is, as its own tools name it (never secrets).
TRACKER_ENVIRON = ("MLFLOW_TRACKING_URI", "TRACKIO_DIR", "HF_HOME", "WANDB_BASE_URL")
#: The credentials each tracker's own client reads from the environment.
TRACKER_CREDENTIALS = (
    "WANDB_API_KEY",
    "MLFLOW_TRACKING_TOKEN",
    "MLFLOW_TRACKING_USERNAME",
    "MLFLOW_TRACKING_PASSWORD",
)
#: What `/rlmap credentials set TRACKER` stores, by tracker.
CREDENTIAL_NAMES = {"wandb": "WANDB_API_KEY", "mlflow": "MLFLOW_TRACKING_TOKEN"}


def _pick(environ: Mapping[str, str], names: tuple[str, ...]) -> dict[str, str]:
    return {name: environ[name] for name in names if environ.get(name)}


def local_access(environ: Mapping[str, str] | None = None) -> Access:
    """A terminal's access: its own environment's trackers and credentials, no allow-list."""
    env = os.environ if environ is None else environ
    return Access(
        wandb_entities=(ANY,),
        mlflow_hosts=(ANY,),
        credentials=_pick(env, TRACKER_CREDENTIALS),
        environ=_pick(env, TRACKER_ENVIRON),
    )


def workspace_access(
    settings: Settings, store: StateStore, team: str, environ: Mapping[str, str] | None = None
) -> Access:
    """What workspace ``team`` may read, with its own
    sealed credentials (none without an encryption key).
    """
    env = os.environ if environ is None else environ
    credentials: dict[str, str] = {}
    unopened: dict[str, str] = {}
    if settings.rlmap_encryption_key is not None:
        from rlmap_bot.crypto import TokenCipher

        cipher = TokenCipher.from_setting(settings.rlmap_encryption_key.get_secret_value())
        credentials, problems = store.credentials.open_all(team, cipher)
        unopened = {name: str(exc) for name, exc in problems.items()}
    roots = tuple(settings.run_roots)
    return Access(
        run_roots=roots,
        paths=bool(roots),
        wandb_entities=settings.wandb_entities,
        mlflow_hosts=settings.mlflow_hosts,
        credentials=credentials,
        environ=_pick(env, TRACKER_ENVIRON),
        unopened=unopened,
    )
