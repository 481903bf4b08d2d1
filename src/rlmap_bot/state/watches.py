"""Watches: the watched paths, what checking learnt, claims on check slots, and the alert ledger.

* ``watches``: one row per path and channel (the :class:`~rlmap_bot.state.models.Watch`).
* ``watch_state``: the :class:`~rlmap_bot.state.models.Tracking` JSON and the bounded
  series, versioned so a check that was given up for dead cannot overwrite a newer one.
* ``watch_checks``: one row per check slot (unique per watch), and at most one
  ``claimed`` row per watch (a partial unique index), so a slot fired on two replicas,
  or a `now` during a scheduled check, runs once; each claim is a lease
  (:mod:`rlmap_bot.state.leases`).
* ``watch_backoff``: a watch whose source could not be read, its failed reads in a row and
  when a scheduled check may read again.
* ``watch_alerts``: the ledger, one row per watch, condition, episode and kind
  (alert, resolved, paused), claimed before posting and marked posted with the
  message ts afterwards; a claim left behind by a crash is settled by looking the
  alert id up in the channel's history.
"""

from __future__ import annotations

import builtins  # inside WatchRepository, "list" is its method
import datetime as dt
import hashlib
from typing import Callable, Literal, Sequence

import sqlalchemy as sa

from rlmap_bot.state.db import ConflictError, insert_ignoring_duplicates, iso, utcnow
from rlmap_bot.state.leases import Leases
from rlmap_bot.state.models import Tracking, Watch
from rlmap_bot.state.tables import (
    watch_alerts,
    watch_backoff,
    watch_checks,
    watch_state,
    watches,
)

AlertKey = tuple[str, int, str]  # (condition, episode, kind)


def path_key(path: str) -> str:
    return hashlib.sha256(path.encode("utf-8", "surrogateescape")).hexdigest()


class WatchRepository:
    def __init__(self, engine: sa.Engine):
        self.engine = engine
        self.checks = Leases(engine, watch_checks, held="claimed")

    # -- the watches -------------------------------------------------------------------------------
    def save(self, watch: Watch) -> Watch:
        """Create the watch, or update the channel's watch
        of the same path (keeping its id and history).
        """
        key = path_key(watch.path)
        for _ in range(2):  # update, else insert; a concurrent insert makes the retry an update
            try:
                with self.engine.begin() as conn:
                    row = conn.execute(
                        sa.select(watches.c.data).where(
                            watches.c.team == watch.team,
                            watches.c.channel == watch.channel,
                            watches.c.path_key == key,
                        )
                    ).first()
                    if row is not None:
                        old = Watch.model_validate_json(row[0])
                        watch = watch.model_copy(
                            update={"id": old.id, "created_at": old.created_at}
                        )
                        conn.execute(
                            watches.update()
                            .where(watches.c.id == old.id)
                            .values(status=watch.status, data=watch.model_dump_json())
                        )
                    else:
                        conn.execute(
                            watches.insert().values(
                                id=watch.id,
                                team=watch.team,
                                channel=watch.channel,
                                path_key=key,
                                status=watch.status,
                                data=watch.model_dump_json(),
                                created_at=iso(watch.created_at),
                            )
                        )
                return watch
            except sa.exc.IntegrityError:
                continue
        raise ConflictError(f"the watch of {watch.path} changed meanwhile")

    def get(self, watch_id: str) -> Watch | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(watches.c.data).where(watches.c.id == watch_id)).first()
        return Watch.model_validate_json(row[0]) if row else None

    def find(self, team: str, channel: str, path: str) -> Watch | None:
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(watches.c.data).where(
                    watches.c.team == team,
                    watches.c.channel == channel,
                    watches.c.path_key == path_key(path),
                )
            ).first()
        return Watch.model_validate_json(row[0]) if row else None

    def list(
        self, team: str | None = None, channel: str | None = None, status: str | None = None
    ) -> list[Watch]:
        query = sa.select(watches.c.data).order_by(watches.c.created_at, watches.c.id)
        if team is not None:
            query = query.where(watches.c.team == team)
        if channel is not None:
            query = query.where(watches.c.channel == channel)
        if status is not None:
            query = query.where(watches.c.status == status)
        with self.engine.connect() as conn:
            return [Watch.model_validate_json(r[0]) for r in conn.execute(query)]

    def set_status(self, watch_id: str, status: str, reason: str | None = None) -> Watch | None:
        with self.engine.begin() as conn:
            row = conn.execute(sa.select(watches.c.data).where(watches.c.id == watch_id)).first()
            if row is None:
                return None
            watch = Watch.model_validate_json(row[0]).model_copy(
                update={"status": status, "paused_reason": reason}
            )
            conn.execute(
                watches.update()
                .where(watches.c.id == watch_id)
                .values(status=status, data=watch.model_dump_json())
            )
        return watch

    def delete(self, watch_id: str) -> bool:
        """Remove the watch and everything kept for it (state, claims, ledger)."""
        with self.engine.begin() as conn:
            for table in (watch_state, watch_checks, watch_alerts, watch_backoff):
                conn.execute(table.delete().where(table.c.watch_id == watch_id))
            return conn.execute(watches.delete().where(watches.c.id == watch_id)).rowcount > 0

    # -- what checking learnt ----------------------------------------------------------------------
    def load_state(self, watch_id: str) -> tuple[Tracking, bytes | None, int]:
        """(tracking, kept series bytes, version); a watch never checked has version 0."""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(watch_state.c.data, watch_state.c.series, watch_state.c.version).where(
                    watch_state.c.watch_id == watch_id
                )
            ).first()
        if row is None:
            return Tracking(), None, 0
        return (
            Tracking.model_validate_json(row[0]),
            (bytes(row[1]) if row[1] is not None else None),
            int(row[2]),
        )

    def tracking(self, watch_ids: Sequence[str]) -> dict[str, Tracking]:
        """Tracking of several watches, without their series (for listings)."""
        if not watch_ids:
            return {}
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(watch_state.c.watch_id, watch_state.c.data).where(
                    watch_state.c.watch_id.in_(watch_ids)
                )
            )
            return {r[0]: Tracking.model_validate_json(r[1]) for r in rows}

    def save_state(
        self, watch_id: str, team: str, tracking: Tracking, series: bytes | None, version: int
    ) -> int:
        """Write the state read at ``version``; ConflictError if someone wrote a newer one since."""
        values = dict(
            data=tracking.model_dump_json(),
            series=series,
            version=version + 1,
            updated_at=iso(utcnow()),
        )
        try:
            with self.engine.begin() as conn:
                if version == 0:
                    conn.execute(
                        watch_state.insert().values(watch_id=watch_id, team=team, **values)
                    )
                else:
                    done = conn.execute(
                        watch_state.update()
                        .where(watch_state.c.watch_id == watch_id, watch_state.c.version == version)
                        .values(**values)
                    )
                    if done.rowcount == 0:
                        raise ConflictError(f"the state of watch {watch_id} changed meanwhile")
        except sa.exc.IntegrityError:
            raise ConflictError(f"the state of watch {watch_id} changed meanwhile") from None
        return version + 1

    # -- a source that cannot be read -------------------------------------------------------------
    def backoff(self, watch_id: str) -> tuple[int, dt.datetime] | None:
        """(failed reads in a row, when a scheduled check may read again), or None."""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(watch_backoff.c.failures, watch_backoff.c.retry_at).where(
                    watch_backoff.c.watch_id == watch_id
                )
            ).first()
        return (int(row[0]), dt.datetime.fromisoformat(row[1])) if row else None

    def failed_read(
        self,
        watch_id: str,
        team: str,
        now: dt.datetime,
        delay: Callable[[int], dt.timedelta],
    ) -> tuple[int, dt.datetime]:
        """Count one more failed read; the next read waits ``delay(failures)``.  Runs inside a
        claimed check (one per watch at a time), so the read and the write do not race."""
        with self.engine.begin() as conn:
            row = conn.execute(
                sa.select(watch_backoff.c.failures).where(watch_backoff.c.watch_id == watch_id)
            ).first()
            failures = (int(row[0]) if row else 0) + 1
            retry_at = now + delay(failures)
            if row is None:
                conn.execute(
                    watch_backoff.insert().values(
                        watch_id=watch_id,
                        team=team,
                        failures=failures,
                        retry_at=iso(retry_at),
                        since=iso(now),
                    )
                )
            else:
                conn.execute(
                    watch_backoff.update()
                    .where(watch_backoff.c.watch_id == watch_id)
                    .values(failures=failures, retry_at=iso(retry_at))
                )
        return failures, retry_at

    def read_again(self, watch_id: str) -> None:
        """The source read: no more waiting."""
        with self.engine.begin() as conn:
            conn.execute(watch_backoff.delete().where(watch_backoff.c.watch_id == watch_id))

    # -- claims on check slots ---------------------------------------------------------------------
    def claim_check(
        self,
        check_id: str,
        watch_id: str,
        team: str,
        slot: str,
        now: dt.datetime,
        stale_after: dt.timedelta,
        owner: str = "",
        owner_dead: Callable[[str], bool] = lambda _owner: False,
    ) -> Literal["claimed", "duplicate", "busy"]:
        """'claimed'; 'duplicate' (this slot ran already); or
        'busy' (another check of the watch is running).

        The claim is a lease of ``stale_after`` (:mod:`rlmap_bot.state.leases`). A claim whose lease
        has run out, or whose owner ``owner_dead`` says has died, belongs to a check that will never
        finish: it is given up first.
        """
        self.checks.give_up(watch_checks.c.watch_id == watch_id, "abandoned", now, gone=owner_dead)
        row = dict(check_id=check_id, watch_id=watch_id, team=team, slot=slot, created_at=iso(now))
        if self.checks.claim(row, owner, stale_after, now):
            return "claimed"
        with self.engine.connect() as conn:
            ran = conn.execute(
                sa.select(watch_checks.c.check_id).where(
                    watch_checks.c.watch_id == watch_id, watch_checks.c.slot == slot
                )
            ).first()
        return "duplicate" if ran else "busy"

    def finish_check(self, check_id: str, status: str) -> None:
        self.checks.release(watch_checks.c.check_id == check_id, status)

    def forget_checks(self, before: dt.datetime) -> int:
        """Drop finished check rows older than ``before``
        (slots matter only while they can fire again).
        """
        with self.engine.begin() as conn:
            return conn.execute(
                watch_checks.delete().where(
                    watch_checks.c.status != "claimed", watch_checks.c.created_at < iso(before)
                )
            ).rowcount

    # -- the alert ledger --------------------------------------------------------------------------
    def claim_alerts(
        self, alert_id: str, watch: Watch, keys: Sequence[AlertKey], now: dt.datetime
    ) -> builtins.list[AlertKey]:
        """Claim ledger rows for one post; returns the keys
        this post got (the others were claimed before).
        """
        if not keys:
            return []
        rows = [
            dict(
                watch_id=watch.id,
                condition=c,
                episode=e,
                kind=k,
                team=watch.team,
                channel=watch.channel,
                alert_id=alert_id,
                status="claimed",
                ts=None,
                created_at=iso(now),
            )
            for c, e, k in keys
        ]
        with self.engine.begin() as conn:
            conn.execute(insert_ignoring_duplicates(self.engine, watch_alerts), rows)
            mine = conn.execute(
                sa.select(
                    watch_alerts.c.condition, watch_alerts.c.episode, watch_alerts.c.kind
                ).where(watch_alerts.c.alert_id == alert_id)
            ).all()
        got = {(r[0], int(r[1]), r[2]) for r in mine}
        return [k for k in keys if k in got]

    def record_alert(self, alert_id: str, ts: str | None) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                watch_alerts.update()
                .where(watch_alerts.c.alert_id == alert_id)
                .values(status="posted", ts=ts)
            )

    def drop_alert(self, alert_id: str) -> None:
        """Forget a claim whose post surely does not
        exist, so the condition can be announced again.
        """
        with self.engine.begin() as conn:
            conn.execute(
                watch_alerts.delete().where(
                    watch_alerts.c.alert_id == alert_id, watch_alerts.c.status == "claimed"
                )
            )

    def pending_alerts(self, watch_id: str) -> builtins.list[dict]:
        """Claims never recorded as posted (a crash may sit
        between posting and recording): one per post.
        """
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(watch_alerts.c.alert_id, sa.func.min(watch_alerts.c.created_at))
                .where(watch_alerts.c.watch_id == watch_id, watch_alerts.c.status == "claimed")
                .group_by(watch_alerts.c.alert_id)
            ).all()
        return [{"alert_id": r[0], "created_at": r[1]} for r in rows]

    def ledger(self, watch_id: str) -> builtins.list[dict]:
        with self.engine.connect() as conn:
            rows = (
                conn.execute(
                    sa.select(watch_alerts)
                    .where(watch_alerts.c.watch_id == watch_id)
                    .order_by(watch_alerts.c.created_at)
                )
                .mappings()
                .all()
            )
        return [dict(r) for r in rows]

    def alert_ts(self, watch_id: str, condition: str, episode: int) -> str | None:
        """The ts of the posted alert that announced
        this episode (a resolved note replies to it).
        """
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(watch_alerts.c.ts).where(
                    watch_alerts.c.watch_id == watch_id,
                    watch_alerts.c.condition == condition,
                    watch_alerts.c.episode == episode,
                    watch_alerts.c.kind == "alert",
                    watch_alerts.c.status == "posted",
                )
            ).first()
        return row[0] if row else None
