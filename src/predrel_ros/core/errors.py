"""Errors a user can act on: the CLI and the nodes print their message without a traceback."""


class UserError(Exception):
    """Bad input, a missing file or an invalid setting, with a message that says what to change."""
