"""Server congestion-control fingerprint (CoNEXT'20's Igor, shared/seeds/002 Sec. 4.1): fetch one
object through the shaper set up as a deep-queue bottleneck and tell loss-based from delay-based
senders by how the queue fills and when the first packet is dropped.

``model`` (records), ``bottleneck`` (pure: packet size, RTT padding, the shaper profile),
``classify`` (pure: timeline -> label), ``probe`` (adapter: curl in the client namespace),
``igor`` (pure: the Table 1 grid, the paper's numbers, a confusion matrix).
"""
