"""A local stand-in for the Slack Web API (and response_url), owned by the tests.

It speaks HTTP on loopback exactly where ``SLACK_API_URL`` points, records
every call with its arguments, keeps posted messages per channel (with their
metadata, for conversations.history), rejects messages that break Block Kit
limits the way Slack does, and can be told to fail a method or answer 429.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, Callable

from support.localserver import LocalServer

BOT_TOKEN = "xoxb-test-token-0000"
SIGNING_SECRET = "test-signing-secret-1234"
BOT_USER = "UBOT"
BOT_ID = "BBOT"
TEAM = "T0001"


@dataclass
class Call:
    method: str
    args: dict
    headers: dict
    target: str = ""  # the response_url name, for replies to a command or click
    at: float = field(default_factory=time.time)


class StandIn(LocalServer):
    """Start with ``StandIn().start()``; ``base_url`` is what SLACK_API_URL should be."""

    def __init__(self, token: str = BOT_TOKEN):
        self.token = token
        self.tokens: dict[str, str] = {token: TEAM}  # bot token -> its workspace
        self.calls: list[Call] = []
        self.messages: dict[str, list[dict]] = {}
        self.failures: dict[str, list[str]] = {}
        self.rate_limits: dict[str, int] = {}
        self.user_tz: dict[str, str] = {}
        self.user_names: dict[str, str] = {}  # user -> real name (users.info)
        # user -> fields of their users.info object that differ from a plain member of the
        # asking workspace: {"is_admin": True}, {"team_id": "T2", "is_owner": True}, ...
        self.people: dict[str, dict] = {}
        self.user_channels: dict[
            str, list[str]
        ] = {}  # user -> channels they are in (users.conversations)
        self.delays: dict[str, float] = {}
        self.holds: dict[str, float] = {}  # act on the call, then wait this long before answering
        # act on the call, then answer only once the test sets the event (at most 30 s): the
        # caller is held mid-request for as long as the test looks, however slow the machine
        self.gates: dict[str, threading.Event] = {}
        self.ws_url = "ws://127.0.0.1:1/link"
        self.files: dict[str, dict] = {}  # id -> {"name", "data", "user"}: files people shared
        self.uploads: dict[
            str, dict
        ] = {}  # id -> {"filename", "data", "length", "completed"}: what the bot uploaded
        self.downloads: list[dict] = []  # every GET of a shared file, with the token used
        self._ts = itertools.count(1)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> StandIn:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if self.path.startswith(
                    "/upload/"
                ):  # step 2 of files_upload_v2: the bytes themselves
                    status = standin.receive_upload(
                        self.path[len("/upload/") :], self.rfile.read(length)
                    )
                    self.send_response(status)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"OK")
                    return
                raw = self.rfile.read(length).decode("utf-8") if length else ""
                ctype = self.headers.get("Content-Type", "")
                if "json" in ctype:
                    args = json.loads(raw or "{}")
                else:
                    args = dict(urllib.parse.parse_qsl(raw, keep_blank_values=True))
                path = self.path.split("?")[0]
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, body, extra = standin.handle(path, args, headers)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in extra.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                if self.path.startswith("/files/"):
                    token = self.headers.get("Authorization", "")[len("Bearer ") :]
                    status, data = standin.download(self.path[len("/files/") :], token)
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.do_POST()

            def do_PUT(self) -> None:  # noqa: N802
                self.do_POST()

        self.serve(Handler)
        return self

    @property
    def url(self) -> str:
        return self.origin

    @property
    def base_url(self) -> str:
        return self.url + "/api/"

    def response_url(self, name: str = "r") -> str:
        return f"{self.url}/respond/{name}"

    # -- behaviour ----------------------------------------------------------------------------
    def fail_next(self, method: str, error: str, times: int = 1) -> None:
        self.failures.setdefault(method, []).extend([error] * times)

    def rate_limit_next(self, method: str, times: int = 1) -> None:
        self.rate_limits[method] = self.rate_limits.get(method, 0) + times

    def handle(self, path: str, args: dict, headers: dict) -> tuple[int, dict, dict]:
        if path.startswith("/respond/"):
            method = "response_url"
        elif path.startswith("/api/"):
            method = path[len("/api/") :]
        else:
            return 404, {"ok": False, "error": "unknown_path"}, {}
        if self.delays.get(method):
            time.sleep(self.delays[method])
        refused = self._refusal(method, args, headers)
        response = refused or (
            200,
            self.answer(method, self._credentials(method, args, headers)),
            {},
        )
        # A call is recorded (and waiters woken) once it is answered: a test that waited for a
        # chat.update reads the channel with that update in it, as Slack's own answer would show it.
        with self._lock:
            self.calls.append(
                Call(
                    method,
                    args,
                    headers,
                    path[len("/respond/") :] if method == "response_url" else "",
                )
            )
            self._changed.notify_all()
        if refused is None and self.holds.get(method):
            time.sleep(self.holds[method])
        gate = self.gates.get(method)
        if refused is None and gate is not None:
            gate.wait(timeout=30)
        return response

    def _refusal(self, method: str, args: dict, headers: dict) -> tuple[int, dict, dict] | None:
        """What Slack answers instead of doing the call: a rate
        limit, a queued failure, a bad token or blocks.
        """
        with self._lock:
            if self.rate_limits.get(method):
                self.rate_limits[method] -= 1
                return 429, {"ok": False, "error": "ratelimited"}, {"Retry-After": "1"}
            if self.failures.get(method):
                return 200, {"ok": False, "error": self.failures[method].pop(0)}, {}
        if method != "response_url" and method != "apps.connections.open":
            if (
                method != "oauth.v2.access"
                and headers.get("authorization", "")[len("Bearer ") :] not in self.tokens
            ):
                return 200, {"ok": False, "error": "invalid_auth"}, {}
        problem = self.block_problem(args.get("blocks"))
        if problem:
            return 200, {"ok": False, "error": "invalid_blocks", "detail": problem}, {}
        return None

    @staticmethod
    def _credentials(method: str, args: dict, headers: dict) -> dict:
        """The call's arguments with what auth.test and oauth.v2.access read from its headers."""
        if method in ("auth.test", "users.info"):
            return {**args, "token": headers.get("authorization", "")[len("Bearer ") :]}
        if method == "oauth.v2.access" and headers.get("authorization", "").startswith("Basic "):
            return {**args, "basic": headers["authorization"][len("Basic ") :]}
        return args

    @staticmethod
    def block_problem(blocks: Any) -> str | None:
        """What Slack would reject in a message's blocks (the limits the bot must respect)."""
        if blocks is None:
            return None
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        if len(blocks) > 50:
            return f"{len(blocks)} blocks (max 50)"
        for block in blocks:
            text = (block.get("text") or {}).get("text", "")
            if block["type"] == "section" and len(text) > 3000:
                return f"section text of {len(text)} characters (max 3000)"
            if block["type"] == "header" and len(text) > 150:
                return "header over 150 characters"
            for element in block.get("elements", []):
                label = (
                    (element.get("text") or {}).get("text", "")
                    if isinstance(element.get("text"), dict)
                    else ""
                )
                if element.get("type") == "button" and len(label) > 75:
                    return "button text over 75 characters"
        return None

    def answer(self, method: str, args: dict) -> dict:
        with self._lock:
            if method == "auth.test":
                return {
                    "ok": True,
                    "url": "https://test.slack.com/",
                    "team": "Test",
                    "user": "rlmap",
                    "team_id": self._team_of(args),
                    "user_id": BOT_USER,
                    "bot_id": BOT_ID,
                }
            if method == "oauth.v2.access":
                basic = (
                    base64.b64decode(args.get("basic", "") or b"").decode()
                    if args.get("basic")
                    else ""
                )
                secret = args.get("client_secret") or basic.partition(":")[2]
                if not args.get("code", "").startswith("code-") or secret != "client-secret":
                    return {"ok": False, "error": "invalid_code"}
                team = args["code"][len("code-") :]
                token = f"xoxb-{team}-installed"
                self.tokens[token] = team
                return {
                    "ok": True,
                    "app_id": "A1",
                    "access_token": token,
                    "token_type": "bot",
                    "scope": "chat:write,commands",
                    "bot_user_id": BOT_USER,
                    "team": {"id": team, "name": f"Team {team}"},
                    "enterprise": None,
                    "authed_user": {"id": "UINSTALLER"},
                    "is_enterprise_install": False,
                }
            if method == "chat.postMessage":
                n = next(self._ts)
                ts = f"{1700000000 + n}.{n:06d}"
                message = {
                    "type": "message",
                    "ts": ts,
                    "text": args.get("text", ""),
                    "user": BOT_USER,
                    "bot_id": BOT_ID,
                    "blocks": args.get("blocks"),
                    "thread_ts": args.get("thread_ts"),
                }
                if args.get("metadata"):
                    message["metadata"] = args["metadata"]
                self.messages.setdefault(args["channel"], []).append(message)
                return {"ok": True, "channel": args["channel"], "ts": ts, "message": message}
            if method == "chat.update":
                for message in self.messages.get(args["channel"], []):
                    if message["ts"] == args["ts"]:
                        message.update(text=args.get("text", ""), blocks=args.get("blocks"))
                        return {
                            "ok": True,
                            "channel": args["channel"],
                            "ts": args["ts"],
                            "text": args.get("text", ""),
                        }
                return {"ok": False, "error": "message_not_found"}
            if method == "chat.postEphemeral":
                return {"ok": True, "message_ts": f"{time.time():.6f}"}
            if method in {"views.publish", "views.open"}:
                view = args.get("view")
                view = json.loads(view) if isinstance(view, str) else view
                return {"ok": True, "view": {**(view or {}), "id": "V1"}}
            if method in {"conversations.history", "conversations.replies"}:
                found = list(reversed(self.messages.get(args.get("channel", ""), [])))
                if (
                    method == "conversations.replies"
                ):  # the thread: its parent and its replies, oldest first
                    found = [
                        m
                        for m in reversed(found)
                        if args.get("ts") in {m["ts"], m.get("thread_ts")}
                    ]
                if str(args.get("include_all_metadata")) not in {"1", "true", "True"}:
                    found = [{k: v for k, v in m.items() if k != "metadata"} for m in found]
                return {"ok": True, "messages": found, "has_more": False}
            if method == "files.getUploadURLExternal":
                file_id = f"F{uuid.uuid4().hex[:10].upper()}"
                self.uploads[file_id] = {
                    "filename": args.get("filename"),
                    "length": int(args.get("length") or 0),
                    "data": None,
                    "completed": None,
                }
                return {
                    "ok": True,
                    "upload_url": f"{self.url}/upload/{file_id}",
                    "file_id": file_id,
                }
            if method == "files.completeUploadExternal":
                files = args.get("files")
                files = json.loads(files) if isinstance(files, str) else files
                done = []
                for item in files or []:
                    upload = self.uploads.get(item.get("id"))
                    if (
                        upload is None
                        or upload["data"] is None
                        or len(upload["data"]) != upload["length"]
                    ):
                        return {"ok": False, "error": "invalid_arguments"}
                    upload["completed"] = {
                        "channel_id": args.get("channel_id"),
                        "thread_ts": args.get("thread_ts"),
                        "title": item.get("title"),
                        "initial_comment": args.get("initial_comment"),
                    }
                    done.append({"id": item.get("id"), "title": item.get("title")})
                return {"ok": True, "files": done}
            if method == "files.info":
                upload = self.uploads.get(args.get("file", ""))
                return {
                    "ok": True,
                    "file": {"id": args.get("file"), "name": (upload or {}).get("filename")},
                }
            if method == "apps.connections.open":
                return {"ok": True, "url": self.ws_url}
            if method == "users.conversations":
                return {
                    "ok": True,
                    "channels": [
                        {"id": c} for c in self.user_channels.get(args.get("user", ""), [])
                    ],
                    "response_metadata": {"next_cursor": ""},
                }
            if method == "users.info":
                return self._user_info(args)
            return {"ok": True}

    def _user_info(self, args: dict) -> dict:
        """users.info as Slack answers it: the user object with the workspace it belongs to and
        its role flags (a plain member unless ``people`` says otherwise); ``user_not_found`` for
        what is no user id."""
        user = args.get("user", "")
        if user[:1] not in ("U", "W") or not user.isalnum():
            return {"ok": False, "error": "user_not_found"}
        name = self.user_names.get(user, "")
        found = {
            "id": user,
            "team_id": self._team_of(args),
            "name": user.lower(),
            "deleted": False,
            "tz": self.user_tz.get(user, "Europe/London"),
            "is_admin": False,
            "is_owner": False,
            "is_primary_owner": False,
            "is_restricted": False,
            "is_ultra_restricted": False,
            "is_bot": False,
            "is_app_user": False,
            "profile": {"display_name": ""},
        }
        if name:
            found["real_name"] = name
            found["profile"] = {"real_name": name, "display_name": name}
        found.update(self.people.get(user, {}))
        return {"ok": True, "user": found}

    def _team_of(self, args: dict) -> str:
        token = args.get("token") or ""
        return self.tokens.get(token, TEAM)

    # -- files ------------------------------------------------------------------------------------
    def share_file(self, name: str, data: bytes, user: str = "U1", team: str = TEAM) -> dict:
        """A file a person uploaded: its Slack file object (with the private download URL)."""
        file_id = f"F{uuid.uuid4().hex[:10].upper()}"
        self.files[file_id] = {"name": name, "data": data, "user": user}
        return {
            "id": file_id,
            "name": name,
            "title": name,
            "size": len(data),
            "user": user,
            "user_team": team,
            "mimetype": "text/plain",
            "filetype": "text",
            "mode": "hosted",
            "url_private": f"{self.url}/files/{file_id}",
            "url_private_download": f"{self.url}/files/{file_id}",
        }

    def download(self, file_id: str, token: str) -> tuple[int, bytes]:
        with self._lock:
            self.downloads.append({"file": file_id, "token": token})
            self._changed.notify_all()
        if token not in self.tokens:
            return 403, b"not allowed"
        found = self.files.get(file_id)
        return (200, found["data"]) if found else (404, b"no such file")

    def receive_upload(self, file_id: str, data: bytes) -> int:
        with self._lock:
            upload = self.uploads.get(file_id)
            if upload is None:
                return 404
            upload["data"] = data
        return 200

    # -- inspection ---------------------------------------------------------------------------
    def of(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def wait_for(
        self,
        method: str,
        where: Callable[[Call], bool] = lambda c: True,
        timeout: float = 10.0,
        count: int = 1,
    ) -> list[Call]:
        """Block until ``count`` calls of ``method`` match ``where``; fail loudly on time-out."""
        deadline = time.time() + timeout
        with self._lock:
            while True:
                found = [c for c in self.calls if c.method == method and where(c)]
                if len(found) >= count:
                    return found
                left = deadline - time.time()
                if left <= 0:
                    seen = [(c.method, str(c.args)[:200]) for c in self.calls[-10:]]
                    raise AssertionError(
                        f"no {count} x {method} matching within {timeout}s; last calls: {seen}"
                    )
                self._changed.wait(left)

    def settle(self, quiet: float = 0.4, timeout: float = 10.0) -> None:
        """Wait until no call has arrived for ``quiet`` seconds (background work finished)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self._lock:
                last = self.calls[-1].at if self.calls else 0.0
            if time.time() - last >= quiet:
                return
            time.sleep(0.05)


def mention(ts: str, text: str = "DAPO", channel: str = "C1", user: str = "U1", **more) -> dict:
    """An app_mention event: ``user`` says ``text`` to the bot in ``channel`` (``more``: other
    fields of the event, such as a ``thread_ts``)."""
    return {
        "type": "app_mention",
        "user": user,
        "channel": channel,
        "ts": ts,
        "text": f"<@{BOT_USER}> {text}",
        **more,
    }


# -- signed requests, as Slack sends them ------------------------------------------------------
def sign(body: str, timestamp: int | None = None, secret: str = SIGNING_SECRET) -> dict[str, str]:
    ts = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{ts}:{body}".encode(), hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def post(
    url: str, body: str, content_type: str, headers: dict[str, str] | None = None
) -> tuple[int, str]:
    request = urllib.request.Request(
        url,
        data=body.encode(),
        method="POST",
        headers={"Content-Type": content_type, **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def trigger_id() -> str:
    """A fresh trigger id, as Slack gives every click and slash command its own."""
    return f"{int(time.time())}.{uuid.uuid4().int % 10**12}.{uuid.uuid4().hex[:12]}"


class Slack:
    """Sends correctly signed events, commands and clicks to a running bot."""

    def __init__(self, bot_url: str, standin: StandIn):
        self.url = bot_url.rstrip("/") + "/slack/events"
        self.dispatch: Callable[[str, dict[str, str]], tuple[int, str]] | None = (
            None  # set for an in-process bot
        )
        self.standin = standin
        self._ids = itertools.count(1)

    def event(
        self,
        event: dict,
        event_id: str | None = None,
        headers: dict | None = None,
        timestamp: int | None = None,
        secret: str = SIGNING_SECRET,
        team: str = TEAM,
    ) -> tuple[int, str]:
        body = json.dumps(
            {
                "token": "legacy",
                "team_id": team,
                "api_app_id": "A1",
                "type": "event_callback",
                "event_id": event_id or f"Ev{uuid.uuid4().hex[:16]}",
                "event_time": int(time.time()),
                "authorizations": [{"team_id": team, "user_id": BOT_USER, "is_bot": True}],
                "event": event,
            }
        )
        return self._send(
            body, "application/json", {**sign(body, timestamp, secret), **(headers or {})}
        )

    def command(
        self,
        text: str,
        user: str = "U1",
        channel: str = "C1",
        respond_as: str = "r",
        timestamp: int | None = None,
        team: str = TEAM,
    ) -> tuple[int, str]:
        body = urllib.parse.urlencode(
            {
                "token": "legacy",
                "team_id": team,
                "team_domain": "test",
                "channel_id": channel,
                "channel_name": "general",
                "user_id": user,
                "user_name": "someone",
                "command": "/rlmap",
                "text": text,
                "api_app_id": "A1",
                "response_url": self.standin.response_url(respond_as),
                "trigger_id": trigger_id(),
            }
        )
        return self._send(body, "application/x-www-form-urlencoded", sign(body, timestamp))

    def click(
        self,
        action_id: str,
        value: str,
        user: str = "U1",
        channel: str = "C1",
        message_ts: str = "1.0",
        thread_ts: str | None = None,
        container: str = "message",
        respond_as: str = "click",
        team: str = TEAM,
        state: dict | None = None,
        ephemeral: bool = False,
    ) -> tuple[int, str]:
        payload = self.click_payload(
            action_id,
            value,
            user,
            channel,
            message_ts,
            thread_ts,
            container,
            respond_as,
            team,
            state,
            ephemeral,
        )
        body = urllib.parse.urlencode({"payload": json.dumps(payload)})
        return self._send(body, "application/x-www-form-urlencoded", sign(body))

    def submit_view(
        self,
        callback_id: str,
        private_metadata: str,
        values: dict,
        user: str = "U1",
        team: str = TEAM,
    ) -> tuple[int, str]:
        """A modal's submission (view_submission), with its
        inputs as Slack sends them under state.values.
        """
        payload = {
            "type": "view_submission",
            "team": {"id": team},
            "user": {"id": user, "team_id": team},
            "api_app_id": "A1",
            "trigger_id": trigger_id(),
            "view": {
                "id": "V1",
                "type": "modal",
                "callback_id": callback_id,
                "private_metadata": private_metadata,
                "state": {"values": values},
            },
        }
        body = urllib.parse.urlencode({"payload": json.dumps(payload)})
        return self._send(body, "application/x-www-form-urlencoded", sign(body))

    def click_payload(
        self,
        action_id: str,
        value: str,
        user: str = "U1",
        channel: str = "C1",
        message_ts: str = "1.0",
        thread_ts: str | None = None,
        container: str = "message",
        respond_as: str = "click",
        team: str = TEAM,
        state: dict | None = None,
        ephemeral: bool = False,
    ) -> dict:
        """The block_actions payload Slack sends for a click on a button.

        A button in an ephemeral message (a `/rlmap`
        answer) comes without ``message``, its container
        marked ``is_ephemeral`` (as in real payloads: only the person saw it, Slack keeps no copy).
        """
        payload = {
            "type": "block_actions",
            "user": {"id": user, "team_id": team},
            "api_app_id": "A1",
            "team": {"id": team},
            "trigger_id": trigger_id(),
            "actions": [
                {
                    "type": "button",
                    "action_id": action_id,
                    "block_id": "b",
                    "value": value,
                    "action_ts": str(time.time()),
                }
            ],
        }
        if state is not None:
            payload["state"] = {"values": state}
        if container == "view":
            payload["container"] = {"type": "view", "view_id": "V1"}
            payload["view"] = {"id": "V1", "type": "home"}
        else:
            payload["container"] = {
                "type": "message",
                "message_ts": message_ts,
                "channel_id": channel,
                **({"thread_ts": thread_ts} if thread_ts else {}),
            }
            payload["channel"] = {"id": channel}
            if ephemeral:
                payload["container"]["is_ephemeral"] = True
            else:
                payload["message"] = {
                    "ts": message_ts,
                    **({"thread_ts": thread_ts} if thread_ts else {}),
                }
            payload["response_url"] = self.standin.response_url(respond_as)
        return payload

    def _send(self, body: str, content_type: str, headers: dict[str, str]) -> tuple[int, str]:
        """Over real HTTP to the bot's server, or straight
        into Bolt's dispatch for an in-process bot.
        """
        if self.dispatch is not None:
            return self.dispatch(body, {"Content-Type": content_type, **headers})
        return post(self.url, body, content_type, headers)
