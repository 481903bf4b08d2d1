"""The state schema: Alembic migrations with frozen DDL, on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from rlmap_bot.state import tables
from rlmap_bot.state.db import migrate
from rlmap_bot.state.store import StateStore


def _columns(engine: sa.Engine) -> dict[str, dict[str, bool]]:
    inspector = sa.inspect(engine)
    return {
        t: {c["name"]: c["nullable"] for c in inspector.get_columns(t)}
        for t in inspector.get_table_names()
        if t in tables.metadata.tables
    }


def test_a_fresh_database_is_migrated_to_the_head_and_matches_the_tables(state_url):
    store = StateStore(state_url)
    with store.engine.connect() as conn:
        head = conn.exec_driver_sql("select version_num from alembic_version").scalar()
    assert (
        head
        == sorted(
            p.name[:4]
            for p in (
                tables.__file__
                and __import__("pathlib")
                .Path(
                    __import__("rlmap_bot.state.db", fromlist=["MIGRATIONS"]).MIGRATIONS
                    / "versions"
                )
                .glob("0*.py")
            )
        )[-1]
    )
    found = _columns(store.engine)
    for name, table in tables.metadata.tables.items():
        assert name in found, f"migrations never create {name}"
        assert found[name] == {c.name: c.nullable for c in table.columns}, (
            f"{name} differs from tables.py"
        )
    assert migrate(store.engine) == head, "migrating again is a no-op"
    store.close()


def test_a_database_from_before_alembic_is_stamped_not_rebuilt(state_url):
    # What the first version left behind: its own migrations table and the tables, with data.
    engine = sa.create_engine(state_url if "://" in state_url else f"sqlite:///{state_url}")
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "create table schema_migrations (version integer primary key, applied_at varchar(40))"
        )
        conn.exec_driver_sql("insert into schema_migrations values (1, 'x'), (2, 'x'), (3, 'x')")
        conn.exec_driver_sql(
            "create table processed_events (event_id varchar(128) primary key, team varchar(64) "
            "not null, seen_at varchar(40) not null)"
        )
        for table in (
            tables.sessions,
            tables.subscriptions,
            tables.digest_runs,
            tables.digest_ledger,
        ):
            table.create(conn)
        conn.exec_driver_sql("insert into processed_events values ('EvOld', 'T1', '2026-01-01')")
    engine.dispose()
    store = StateStore(state_url)
    lease = dt.timedelta(seconds=30)
    outcome, _ = store.events.claim("event:EvOld", "event", "T1", None, "replica", lease)
    assert outcome == "done", "an event handled before the upgrade is still answered once"
    assert store.events.claim("event:EvNew", "event", "T1", None, "replica", lease)[0] == "new"
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("select version_num from alembic_version").scalar() >= "0004"
        assert "processed_events" not in sa.inspect(conn).get_table_names()
    store.close()


def test_an_0003_database_keeps_its_handled_events_and_gets_room_for_encrypted_tokens(state_url):
    from alembic import command
    from alembic.config import Config
    from slack_sdk.oauth.installation_store.models.installation import Installation
    from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore

    from rlmap_bot.state.db import MIGRATIONS

    engine = sa.create_engine(state_url if "://" in state_url else f"sqlite:///{state_url}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    with (
        engine.begin() as conn
    ):  # the schema as the previous release left it, with an OAuth install
        config.attributes["connection"] = conn
        command.upgrade(config, "0003")
        conn.exec_driver_sql(
            "insert into processed_events values ('EvBefore', 'T1', '2026-11-30T10:00:00+00:00')"
        )
    plain = SQLAlchemyInstallationStore(client_id="c", engine=engine)
    plain.create_tables()
    plain.save(
        Installation(app_id="A1", team_id="T1", user_id="U1", bot_token="xoxb-1-plain", bot_id="B1")
    )
    engine.dispose()

    store = StateStore(state_url)
    assert (
        store.events.claim("event:EvBefore", "event", "T1", None, "r", dt.timedelta(seconds=30))[0]
        == "done"
    )
    kinds = {c["name"]: c["type"] for c in sa.inspect(store.engine).get_columns("slack_bots")}
    if store.engine.dialect.name == "postgresql":  # SQLite never enforced the 200 characters
        assert isinstance(kinds["bot_token"], sa.Text), (
            "a Fernet token is longer than the plain one"
        )
    long_token = (
        "xoxe.xoxb-1-" + "x" * 150
    )  # a rotating token: its Fernet form is over 200 characters
    from cryptography.fernet import Fernet

    from rlmap_bot.crypto import TokenCipher
    from rlmap_bot.slack.oauth import EncryptedInstallationStore

    sealed = EncryptedInstallationStore(
        "c", store.engine, TokenCipher.from_setting(Fernet.generate_key().decode())
    )
    sealed.save(
        Installation(app_id="A1", team_id="T2", user_id="U1", bot_token=long_token, bot_id="B2")
    )
    assert sealed.find_bot(enterprise_id=None, team_id="T2").bot_token == long_token
    store.close()


def test_runs_and_checks_claimed_before_0007_keep_the_lease_their_claim_gave_them(state_url):
    from alembic import command
    from alembic.config import Config

    from rlmap_bot.state.db import MIGRATIONS, iso

    engine = sa.create_engine(state_url if "://" in state_url else f"sqlite:///{state_url}")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    now = dt.datetime.now(dt.UTC)
    with engine.begin() as conn:  # the schema of the previous release, with claims in flight
        config.attributes["connection"] = conn
        command.upgrade(config, "0006")
        for digest_id, channel, age in [("old", "C1", 10), ("fresh", "C2", 0)]:
            conn.execute(
                sa.text(
                    "insert into digest_runs (digest_id, team, channel, slot, status, entries, "
                    "created_at) values (:d, 'T1', :c, 'at:1', 'claimed', '[]', :at)"
                ),
                {"d": digest_id, "c": channel, "at": iso(now - dt.timedelta(minutes=age))},
            )
        for check_id, watch_id, age in [("stale", "W1", 11), ("running", "W2", 5)]:
            conn.execute(
                sa.text(
                    "insert into watch_checks (check_id, watch_id, team, slot, status, owner, "
                    "created_at) values (:k, :w, 'T1', 'at:1', 'claimed', 'elsewhere:1:x', :at)"
                ),
                {"k": check_id, "w": watch_id, "at": iso(now - dt.timedelta(minutes=age))},
            )
    engine.dispose()

    store = StateStore(state_url)
    assert store.digests.give_up("old") is True, "claimed 10 minutes ago: its 2-minute lease is out"
    assert store.digests.give_up("fresh") is False, "claimed just now: still posting, perhaps"
    stale = dt.timedelta(minutes=10)
    claim = store.watches.claim_check
    assert claim("c1", "W1", "T1", "at:2", now, stale) == "claimed", "11 minutes: given up"
    assert claim("c2", "W2", "T1", "at:2", now, stale) == "busy", "5 minutes: still running"
    store.close()
