"""The development kit shared by the tests (tests/) and the benchmarks (scripts/bench/): the local
test site (caddy on a.test and b.test), a minimal CDP client and the extension's pages, an
everyday browser profile with recording switched on, caddy's access-log reader, the lab-load
harness, and builders of records, stores, synthetic datasets and collector bundles. Product code
never imports it."""
