"""ProtoLens native host: store, policies, shaping, testbed, lab campaigns and analysis.

See docs/ARCHITECTURE.md for where each subpackage sits.
"""

__version__ = "0.1.0"
