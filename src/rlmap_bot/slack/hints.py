"""What to tell a user when Slack refuses a post, by Slack's error code."""

CANNOT_POST = {
    "not_in_channel": "I'm not in this channel. Invite me with `/invite @rlmap`, then try again.",
    "channel_not_found": "I can't see this channel. If it is private, invite me with `/invite @rlmap` first.",
    "is_archived": "This channel is archived, so I can't post in it.",
    "missing_scope": "I lack a permission for this (a Slack scope). Ask an admin to reinstall the app with the scopes in deploy/manifest.yaml.",
    "restricted_action": "This workspace does not let me post here.",
    "not_allowed_token_type": "My token cannot post here; check the app's installation.",
    "channel_is_archived": "This channel is archived, so I can't post in it.",
}
