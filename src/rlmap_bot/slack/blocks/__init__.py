"""Block Kit for command results and posts, one module per feature.

Everything here is pure: core models in, blocks out. All text from users or the catalog is
escaped for mrkdwn (nobody can make the bot ping @channel or forge a link) and every message stays
inside Slack's limits. Which blocks a result becomes, and where they go, is decided once per
result type in :mod:`rlmap_bot.slack.render`.
"""
