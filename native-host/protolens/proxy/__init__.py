"""The protocol-translating proxy for lab profiles, and the local CONNECT relay (docs/POLICY.md).

``core``: pure decisions (CONNECT, credential, round-robin, flow-control chunks, headers, report).
``upstream``: upstream HTTP/1.1 (h11), HTTP/2 (h2) and HTTP/3 (aioquic) connections, pools.
``server``: the asyncio adapter (listener, TLS termination, browser side, control socket).
``peer``: the lab browser's credential via /proc (the per-install CA is ``protolens.certs``).
``control``: starting the proxy (in a network namespace) and talking to it from the runner.
``relay``: the plain CONNECT relay for ``no-h3`` in everyday browsers (never intercepts).
"""
