"""The NavigationRecord (docs/RECORD.md): frozen dataclasses, validated at the JSON boundary.

Pure: no I/O. ``parse_record(obj)`` turns a decoded JSON object into a ``NavigationRecord`` or
raises ``RecordError`` naming the first bad field.
"""

from protolens.record.model import (
    FAMILIES,
    SCHEMA_VERSION,
    SOURCES,
    URL_DETAILS,
    AppliedPolicy,
    Browser,
    Connection,
    Experiment,
    HostSummary,
    Milestones,
    NavigationRecord,
    NetworkInfo,
    Page,
    Request,
)
from protolens.record.validate import RecordError, parse_record

__all__ = [
    "FAMILIES", "SCHEMA_VERSION", "SOURCES", "URL_DETAILS", "AppliedPolicy", "Browser",
    "Experiment", "Connection", "HostSummary",
    "Milestones", "NavigationRecord", "NetworkInfo", "Page", "Request", "RecordError",
    "parse_record",
]
