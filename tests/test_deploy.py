"""deploy/ agrees with what the app listens for."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_manifest_declares_what_the_app_uses():
    manifest = yaml.safe_load((ROOT / "deploy" / "manifest.yaml").read_text())
    assert [c["command"] for c in manifest["features"]["slash_commands"]] == ["/rlmap"]
    assert manifest["features"]["app_home"]["home_tab_enabled"] is True
    assert manifest["features"]["app_home"]["messages_tab_enabled"] is True
    events = set(manifest["settings"]["event_subscriptions"]["bot_events"])
    assert {"app_mention", "message.im", "app_home_opened", "message.channels"} <= events
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    assert {
        "app_mentions:read",
        "chat:write",
        "commands",
        "im:history",
        "channels:history",
        "users:read",
        "files:read",
        "files:write",
    } <= scopes
    from rlmap_bot.settings import DEFAULT_SCOPES

    assert set(DEFAULT_SCOPES.split(",")) == scopes, (
        "the OAuth install asks for what the manifest declares"
    )
    assert manifest["settings"]["interactivity"]["is_enabled"] is True
    assert manifest["settings"]["socket_mode_enabled"] is True
    assert 1 <= len(manifest["display_information"]["name"]) <= 35


def test_service_and_container_run_the_real_command():
    unit = (ROOT / "deploy" / "rlmap-bot.service").read_text()
    assert "ExecStart=/opt/rlmap-bot/.venv/bin/rlmap-bot serve" in unit
    container = (ROOT / "deploy" / "Containerfile").read_text()
    assert 'ENTRYPOINT ["rlmap-bot"]' in container and "COPY knowledge" in container


def test_every_setting_is_in_the_operations_settings_tables():
    from rlmap_bot.settings import env_names

    operations = (ROOT / "docs" / "operations.md").read_text()
    rows = {line.split("|")[1] for line in operations.splitlines() if line.startswith("| `")}
    missing = [name for name in env_names() if not any(f"`{name}`" in row for row in rows)]
    assert not missing, f"settings missing from docs/operations.md's tables: {missing}"
