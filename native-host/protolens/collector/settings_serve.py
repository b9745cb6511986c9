"""``collector serve``'s settings (pure): one frozen record, and its JSON form, which is how a
``--workers N`` server hands them to its worker processes (uvicorn starts each worker from an
import string, ``serve.worker_app``, reading them from ``ENV``)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from protolens.collector.connguard import ConnLimits
from protolens.collector.limits import Limits

ENV = "PROTOLENS_COLLECTOR_SETTINGS"


@dataclass(frozen=True)
class Settings:
    data: Path
    limits: Limits = field(default_factory=Limits)
    per_minute: float = 60.0
    """Uploads per minute per token (after ``burst``)."""
    burst: int = 30
    max_uploads: int = 8
    """Uploads received at once by one process; 503 with Retry-After past it."""
    validations: int = 1
    """Uploads validated at once by one process (each decodes up to ``max_uncompressed``)."""
    lease_s: float = 30.0
    """A writer's lease (``writer.py``); a killed process's files are swept this long after."""
    body_timeout_s: float = 10.0
    """Longest pause between two pieces of a body."""
    upload_timeout_s: float = 300.0
    """Longest time to receive a whole body."""
    auth_per_minute: float = 10.0
    """Failed authentications per minute per source (after ``auth_burst``)."""
    auth_burst: int = 20
    auth_global_per_minute: float = 600.0
    """Failed authentications per minute from all sources together."""
    connections: ConnLimits = field(default_factory=ConnLimits)
    board: str | None = None
    """The folder where ``--workers N`` processes publish their connection counts
    (``balance.py``); None with one process."""

    def to_json(self) -> str:
        raw = asdict(self)
        raw["data"] = str(self.data)
        return json.dumps(raw)

    @classmethod
    def from_json(cls, text: str) -> Settings:
        raw = json.loads(text)
        return cls(**{**raw, "data": Path(raw["data"]), "limits": Limits(**raw["limits"]),
                      "connections": ConnLimits(**raw["connections"])})
