"""The Slack front-end: settings, Block Kit, the Bolt app, and the servers that run it."""
