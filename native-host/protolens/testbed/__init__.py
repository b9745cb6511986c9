"""The network lab: client, router and server namespaces, caddy serving h1/h2/h3 on 443, the
NFQUEUE shaper in the router, and the per-flow ground truth. Python API for lab campaigns:

    tb = Testbed.load("pl")            # or Testbed.up(name="pl", profile="wifi")
    tb.exec_argv(["curl", ...])         # argv prefix to run in the client namespace
    tb.shape("wifi-lossy"); tb.flush_tcp_metrics(); tb.truth(reset=True); tb.lateness()

The same lifecycle (``lifecycle.Network``) serves the wan path (``wan.WanNetwork``: the client
namespace NATed out of the uplink), with the same calls.
"""

from protolens.testbed.adapter import Testbed
from protolens.testbed.spec import SERVER_CCS, TestbedError, TestbedState

__all__ = ["SERVER_CCS", "Testbed", "TestbedError", "TestbedState"]
