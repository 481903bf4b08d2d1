"""Growing the catalog from suggestions: arXiv look-ups,
proposed tags, dedupe, curators' decisions, the scout.

Core only: plain values in, pydantic models out. Slack renders candidates as cards
(:mod:`rlmap_bot.slack.curation`); the terminal prints them (``rlmap-bot suggest``).
"""
