"""The one exception type for user mistakes: printed as one line, exit code 2, no traceback."""

from __future__ import annotations

import click


class UserError(click.ClickException):
    """A mistake the user can fix (bad argument, missing file, unknown name)."""

    exit_code = 2

    def show(self, file: object = None) -> None:  # one line on stderr, no "Usage:" block
        click.echo(f"error: {self.format_message()}", err=True)
