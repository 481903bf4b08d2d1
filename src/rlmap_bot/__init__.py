"""rlmap-bot: the RL Scaling Bottleneck Map in a team's Slack.

The core (``knowledge``, ``search``, ``diagnosis``, ``state``) knows nothing of
Slack; the front-ends (``cli``, ``slack``) translate to and from it.
"""

__version__ = "0.1.0"
