"""Figures for papers: pure functions from rows to a matplotlib ``Figure``
(object API, Agg, no pyplot global state); ``cli/plot.py`` queries the store and saves them.

Kinds: ``plt-box`` (IFIP'18 Fig. 5), ``byte-shares`` (IFIP'18 Fig. 4c), ``delta-cdf`` (CoNEXT'20
Fig. 2b), ``speedup`` (IFIP'18 Fig. 5c), ``cwnd`` (IFIP'18 Fig. 3, from testbed TCP samples).
"""
