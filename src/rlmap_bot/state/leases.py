"""Claiming a piece of work with an owner and a lease: the one primitive every claim uses.

Each kind of claimed work keeps its lease in its own row, under the same columns:
``status`` (a *held* value while claimed), ``owner`` (who holds it, an :data:`OWNER`
id), a lease time (``lease_until``, or the column the table names), and, where work is
handed on, ``attempts``:

==============  ========  ===============  ======================================
table           held      lease column     claimed for
==============  ========  ===============  ======================================
event_claims    working   lease_until      a request Slack sent (``events.py``)
digest_runs     claimed   lease_until      a digest slot of a channel
watch_checks    claimed   lease_until      a check of a watch
suggestions     waiting   next_try_at      one arXiv try of a kept suggestion
scout_runs      claimed   lease_until      a weekly scan
==============  ========  ===============  ======================================

:class:`Leases` holds the operations, on SQLite and PostgreSQL alike (SQLAlchemy Core):
:meth:`~Leases.claim` (insert; a unique key makes the second claim fail),
:meth:`~Leases.take_over` (own a held row whose lease has run out, with a compare-and-set
on its owner and attempts, so exactly one contender wins), :meth:`~Leases.renew`,
:meth:`~Leases.release`, :meth:`~Leases.give_up` (close held rows whose lease ran out or
whose owner is gone) and :meth:`~Leases.expired`.

Times are ISO strings in UTC with a fixed format (``db.iso``), so they compare as text on
both engines. Leases are judged by each replica's own clock: replicas are assumed to agree
within a few seconds, far less than any lease.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from rlmap_bot.state.db import iso, utcnow

# The host part of an owner id: 40 characters keep the whole id within event_claims.owner (80).
HOST = socket.gethostname()[:40]


def owner_id() -> str:
    """A new owner id, ``host:pid:token``: the token tells two processes with one pid apart."""
    return f"{HOST}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


#: The owner of every claim this process makes (a restarted container is often pid 1 again:
#: hence the token).
OWNER = owner_id()


def owner_gone(owner: str) -> bool:
    """Whether the process an owner id names has surely ended (knowable only for this host)."""
    try:
        host, pid_text, _token = owner.rsplit(":", 2)
        pid = int(pid_text)
    except ValueError:
        return False
    if host[:40] != HOST:
        return False
    if pid == os.getpid():
        return owner != OWNER  # this pid, another token: an earlier process
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # someone else's process: alive
        return False
    return False


class GaveUp(Exception):
    """A claim was taken over too often; it is marked failed instead of being tried again."""

    def __init__(self, key: str, attempts: int):
        super().__init__(f"{key} was tried {attempts} times; giving up on it")
        self.key, self.attempts = key, attempts


@dataclass(frozen=True)
class Leases:
    """Leases on the rows of one table (see the module docstring for the columns)."""

    engine: sa.Engine
    table: sa.Table
    held: str  # the status of a claimed row
    until: str = "lease_until"  # the column holding when the lease runs out

    @property
    def c(self) -> Any:
        return self.table.c

    def _lease(self) -> sa.ColumnElement:
        return self.table.c[self.until]

    # -- claiming ---------------------------------------------------------------------------------
    def claim(
        self,
        row: Mapping[str, Any],
        owner: str,
        lease: dt.timedelta,
        now: dt.datetime | None = None,
    ) -> bool:
        """Insert ``row`` held by ``owner`` until ``now + lease``; False when its key is taken."""
        values = {
            **row,
            "status": self.held,
            "owner": owner,
            self.until: iso((now or utcnow()) + lease),
        }
        if "attempts" in self.c:
            values.setdefault("attempts", 1)
        try:
            with self.engine.begin() as conn:
                conn.execute(self.table.insert().values(**values))
            return True
        except sa.exc.IntegrityError:
            return False

    def take_over(
        self,
        where: sa.ColumnElement,
        key: str,
        owner: str,
        lease: dt.timedelta,
        now: dt.datetime | None = None,
        max_attempts: int | None = None,
        on_give_up: Mapping[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """Own the held row ``where`` selects if its lease has run out; the row, or None.

        None when there is no such row, it is not held, its lease is live, or another contender
        changed it first. When it has been attempted ``max_attempts`` times already it is marked
        ``failed`` (with ``on_give_up``'s values) and :class:`GaveUp` is raised instead.
        """
        now = now or utcnow()
        c = self.c
        gave_up = 0
        with self.engine.begin() as conn:
            row = conn.execute(sa.select(self.table).where(where)).mappings().first()
            if (
                row is None
                or row["status"] != self.held
                or row[self.until] is None
                or row[self.until] > iso(now)
            ):
                return None
            same = [
                where,
                c.status == self.held,
                self._lease() == row[self.until],
                c.owner.is_(None) if row["owner"] is None else c.owner == row["owner"],
            ]
            attempts = int(row["attempts"]) if "attempts" in c else 0
            if max_attempts is not None and attempts >= max_attempts:
                gave_up = conn.execute(
                    self.table.update()
                    .where(*same)
                    .values(status="failed", **dict(on_give_up or {}))
                ).rowcount
                taken = 0
            else:
                values: dict[str, Any] = {"owner": owner, self.until: iso(now + lease)}
                if "attempts" in c:
                    values["attempts"] = attempts + 1
                taken = conn.execute(self.table.update().where(*same).values(**values)).rowcount
        if gave_up:  # raised outside the transaction, so the row stays marked failed
            raise GaveUp(key, attempts)
        if taken != 1:
            return None
        return {**row, **values}

    # -- while working ----------------------------------------------------------------------------
    def renew(self, where: sa.ColumnElement, owner: str, lease: dt.timedelta) -> int:
        """Extend the leases ``owner`` holds on the rows ``where`` selects; how many it holds."""
        c = self.c
        with self.engine.begin() as conn:
            return conn.execute(
                self.table.update()
                .where(where, c.owner == owner, c.status == self.held)
                .values({self.until: iso(utcnow() + lease)})
            ).rowcount

    def holder(self, where: sa.ColumnElement) -> str | None:
        """The owner of the row ``where`` selects (held or not); None if there is no such row."""
        with self.engine.connect() as conn:
            return conn.execute(sa.select(self.c.owner).where(where)).scalar()

    # -- letting go -------------------------------------------------------------------------------
    def release(
        self,
        where: sa.ColumnElement,
        status: str,
        owner: str | None = None,
        expired_by: dt.datetime | None = None,
        **values: Any,
    ) -> int:
        """Close the held rows ``where`` selects with ``status`` (and ``values``); how many closed.

        ``owner``: only while that owner holds them (a replica that lost its lease changes nothing).
        ``expired_by``: only rows whose lease had run out by then (work given up for dead).
        """
        c = self.c
        conditions = [where, c.status == self.held]
        if owner is not None:
            conditions.append(c.owner == owner)
        if expired_by is not None:
            conditions.append(self._lease() <= iso(expired_by))
        with self.engine.begin() as conn:
            return conn.execute(
                self.table.update().where(*conditions).values(status=status, **values)
            ).rowcount

    def give_up(
        self,
        where: sa.ColumnElement,
        status: str,
        now: dt.datetime | None = None,
        gone: Callable[[str], bool] = owner_gone,
    ) -> int:
        """Close the held rows ``where`` selects whose lease ran out or whose owner is ``gone``."""
        now = now or utcnow()
        c = self.c
        closed = self.release(where, status, expired_by=now)
        with self.engine.begin() as conn:
            for row in conn.execute(
                sa.select(c.owner, self._lease()).where(where, c.status == self.held)
            ).all():
                if row[0] is not None and gone(row[0]):
                    closed += conn.execute(
                        self.table.update()
                        .where(
                            where, c.status == self.held, c.owner == row[0], self._lease() == row[1]
                        )
                        .values(status=status)
                    ).rowcount
        return closed

    def expired(
        self,
        columns: list[sa.ColumnElement],
        now: dt.datetime | None = None,
        limit: int | None = None,
    ) -> list[sa.Row]:
        """``columns`` of the held rows whose lease has run out, the longest expired first."""
        query = (
            sa.select(*columns)
            .where(self.c.status == self.held, self._lease() <= iso(now or utcnow()))
            .order_by(self._lease())
        )
        if limit is not None:
            query = query.limit(limit)
        with self.engine.connect() as conn:
            return list(conn.execute(query).all())
