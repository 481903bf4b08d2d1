"""What commands return: pydantic models and nothing heavier, one module per feature.

Handlers return these; every front-end renders them by their type (``cli/render.py`` and
``cli/terminal.py`` in a terminal, ``slack/blocks/`` and ``slack/dispatch.py`` in Slack), and
each command declares the ones it returns (``Command.returns``).
"""
