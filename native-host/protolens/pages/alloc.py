"""Splitting a page's byte budget over its objects: exact integer totals, seeded where it varies.

Pure. The papers give totals and counts; how a total splits over objects is ProtoLens's choice,
made here and cited by the catalog in each page's ``source``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence


def unit(*key: object) -> float:
    """A uniform number in [0, 1) determined by ``key`` (SHA-256; no RNG state, stable forever)."""
    digest = hashlib.sha256("/".join(map(str, key)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def equal_split(total: int, n: int) -> list[int]:
    """``n`` sizes differing by at most one byte, summing to ``total``."""
    if n <= 0:
        raise ValueError("need at least one object")
    q, r = divmod(total, n)
    return [q + 1 if i < r else q for i in range(n)]


def weighted_split(total: int, weights: Sequence[float], minimums: Sequence[int],
                   aligns: Sequence[int]) -> list[int]:
    """Sizes proportional to ``weights``, each at least its minimum and a multiple of its align.

    Water-filling: ``size_i = max(min_i, weight_i * lam)`` with ``lam`` found by bisection; the
    rounding remainder goes to object 0, which must have align 1 (the page's HTML).
    """
    n = len(weights)
    if not n or len(minimums) != n or len(aligns) != n or aligns[0] != 1:
        raise ValueError("weights, minimums and aligns must match; object 0 must have align 1")
    if sum(minimums) > total:
        raise ValueError(f"{n} objects need at least {sum(minimums)} bytes, more than {total}")
    lo, hi = 0.0, total / min(weights)
    for _ in range(200):
        lam = (lo + hi) / 2
        if sum(max(m, w * lam) for w, m in zip(weights, minimums, strict=True)) > total:
            hi = lam
        else:
            lo = lam
    sizes = [max(m, int(w * lo) // a * a)
             for w, m, a in zip(weights, minimums, aligns, strict=True)]
    sizes[0] += total - sum(sizes)
    if sizes[0] < minimums[0]:  # pragma: no cover - lo keeps the sum at or below total
        raise ValueError("allocation failed")
    return sizes


def range_split(total: int, n: int, smallest: int, largest: int) -> list[int]:
    """``n`` ascending sizes from exactly ``smallest`` to exactly ``largest``, totalling ``total``.

    ``size_i = smallest * (largest / smallest) ** ((i / (n - 1)) ** p)``: log-spaced for p = 1,
    skewed to small objects for p > 1 (heavy-tailed, as web object sizes are); ``p`` is solved by
    bisection so the sizes sum to ``total``.
    """
    if n < 2 or not 0 < smallest < largest:
        raise ValueError("need at least two objects and 0 < smallest < largest")
    low, high = (n - 1) * smallest + largest, smallest + (n - 1) * largest
    if not low < total < high:
        raise ValueError(f"{n} objects of {smallest}..{largest} bytes cannot total {total}")
    ratio = math.log(largest / smallest)

    def sizes(p: float) -> list[float]:
        return [smallest * math.exp(ratio * (i / (n - 1)) ** p) for i in range(n)]

    lo, hi = math.log(1e-6), math.log(1e6)  # bisection on log p; the sum falls as p grows
    for _ in range(200):
        mid = (lo + hi) / 2
        if sum(sizes(math.exp(mid))) > total:
            lo = mid
        else:
            hi = mid
    exact = sizes(math.exp(hi))
    out = [int(x) for x in exact]
    out[0], out[-1] = smallest, largest
    remainder = total - sum(out)
    # settle the rounding remainder (a few bytes) one byte at a time on interior objects
    step = 1 if remainder > 0 else -1
    for i in range(4 * n * abs(remainder)):
        if remainder == 0:
            break
        j = 1 + i % max(1, n - 2)
        if j < n - 1 and smallest <= out[j] + step <= largest:
            out[j] += step
            remainder -= step
    if remainder != 0:  # pragma: no cover - the bisection leaves less than n bytes over
        raise ValueError("range split failed")
    return sorted(out)
