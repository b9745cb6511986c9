"""Which extra a command needs when one of its libraries is missing (docs/PACKAGING.md): the
core install records, stores, relays, installs, checks and contributes; research, lab,
collector and spark add the rest. A command run without its extra says which one to install, in
one line."""

from __future__ import annotations

import click

from protolens.cli.errors import UserError

MODULE_EXTRA = {"numpy": "research", "scipy": "research", "matplotlib": "research",
                "duckdb": "research", "pyarrow": "research", "aioquic": "lab",
                "cryptography": "lab", "PIL": "lab", "fontTools": "lab", "starlette": "collector",
                "uvicorn": "collector", "pyspark": "spark"}
"""Top-level module -> the extra that installs it (the smallest one, when several do)."""
COMMAND_EXTRA = {"compare": "research", "report": "research", "plot": "research",
                 "merge": "research", "policy": "research", "lab": "lab", "testbed": "lab",
                 "cc": "lab", "collector": "collector"}
"""Top-level command -> the extra that brings everything it uses (``lab`` includes
``research``; ``policy suggest`` is the policy command that needs one)."""


def extra_for(command: str, missing: str) -> str | None:
    """The extra to install for ``command`` (its top-level name) lacking module ``missing``;
    None when ``missing`` is no library of an extra (a real bug, not an install choice)."""
    top = missing.split(".", 1)[0]
    if top not in MODULE_EXTRA:
        return None
    if top == "pyspark":
        return "spark"
    return COMMAND_EXTRA.get(command, MODULE_EXTRA[top])


def message(command_path: str, extra: str) -> str:
    return f"{command_path} needs the {extra} extra: pip install 'protolens[{extra}]'"


def needs_extra(command_path: str, extra: str) -> click.Command:
    """A stand-in for a command whose extra is not installed: listed in ``--help``, and one line
    saying what to install when run."""
    def fail(**_: object) -> None:
        raise UserError(message(command_path, extra))

    return click.Command(command_path.rsplit(" ", 1)[-1], callback=fail,
                         help=f"(needs protolens[{extra}])",
                         context_settings={"ignore_unknown_options": True,
                                           "allow_extra_args": True})
