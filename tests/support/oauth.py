"""The OAuth install flow walked as a browser would, against a bot served over HTTP."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def get(url: str, cookie: str | None = None) -> tuple[int, str, dict]:
    opener = urllib.request.build_opener(NoRedirect)
    request = urllib.request.Request(url, headers={"Cookie": cookie} if cookie else {})
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, response.read().decode(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), dict(exc.headers)


def install(bot, team: str) -> str:
    """Walk the install flow as a browser would; return the success page."""
    status, page, headers = get(bot.url + "/slack/install")
    assert status == 200 and "slack.com/oauth/v2/authorize" in page
    cookie = headers["Set-Cookie"].split(";")[0]
    state = cookie.split("=", 1)[1]
    assert f"state={state}" in page
    status, page, _ = get(
        f"{bot.url}/slack/oauth_redirect?code=code-{team}&state={urllib.parse.quote(state)}", cookie
    )
    assert status == 200, page
    return page
