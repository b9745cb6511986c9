"""The catalog against the papers' numbers (copied here from shared/seeds/, not from the code)."""

from __future__ import annotations

import re

import pytest

from protolens.pages import HOSTS, INDEX, catalog, custom_page, parse_size
from protolens.pages.model import PageSpec

# IFIP'18 Table I (shared/seeds/000): HTML, CSS, JS, Image, Other, Total, Size (kB)
TABLE_I = {
    "baidu": (1, 1, 1, 6, 1, 10, 50), "google": (2, 1, 3, 5, 1, 12, 56),
    "live": (2, 2, 2, 2, 0, 8, 262), "twitter": (6, 1, 4, 2, 3, 16, 421),
    "wikipedia": (1, 1, 2, 20, 1, 25, 441), "reddit": (4, 2, 5, 26, 2, 39, 470),
    "yahoo": (16, 13, 5, 48, 4, 86, 839), "vk": (4, 1, 14, 3, 1, 23, 920),
    "taobao": (2, 2, 7, 38, 4, 53, 1320), "instagram": (3, 1, 7, 25, 1, 37, 1409),
    "qq": (15, 6, 19, 115, 6, 161, 1728), "sohu": (13, 11, 33, 167, 4, 228, 2056),
    "youtube": (8, 3, 5, 113, 20, 149, 2911), "facebook": (1, 1, 8, 123, 1, 134, 3560),
    "amazon": (5, 2, 14, 41, 2, 64, 3723),
}


@pytest.fixture(scope="module")
def pages() -> dict[str, PageSpec]:
    return {p.name: p for p in catalog()}


def _objects(page: PageSpec) -> list[int]:
    """Sizes of the paper's objects (everything but the page's own HTML)."""
    return [o.bytes for o in page.objects if o.path != INDEX]


def test_names_are_unique_short_kebab_case(pages: dict[str, PageSpec]) -> None:
    names = [p.name for p in catalog()]
    assert len(names) == len(set(names)) == 50
    for name in names:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) and len(name) <= 24, name


def test_catalog_is_pure_and_deterministic() -> None:
    assert catalog() == catalog()
    assert [p.spec_hash() for p in catalog()] == [p.spec_hash() for p in catalog()]
    assert catalog(seed=1)[0].spec_hash() != catalog()[0].spec_hash()


@pytest.mark.parametrize("site", sorted(TABLE_I))
def test_ifip18_pages_match_table_i(pages: dict[str, PageSpec], site: str) -> None:
    page = pages[f"ifip18-{site}"]
    html, css, js, image, other, total, kb = TABLE_I[site]
    assert page.counts() == {"html": html, "css": css, "js": js, "image": image, "other": other}
    assert len(page.objects) == total
    assert abs(page.total_bytes - kb * 1000) <= 0.01 * kb * 1000
    assert page.total_bytes == kb * 1000  # exact, in fact
    assert 1 <= len(page.hosts) <= 3
    assert "Table I" in page.source and "ProtoLens choices" in page.source


def test_ifip18_hosts_follow_table_ii_where_known(pages: dict[str, PageSpec]) -> None:
    # Table II domain counts: Google 1, Wikipedia 2, Instagram 3, Twitter 2, Facebook 2
    for site, n in {"google": 1, "wikipedia": 2, "instagram": 3, "twitter": 2,
                    "facebook": 2}.items():
        assert len(pages[f"ifip18-{site}"].hosts) == n, site
    assert {len(p.hosts) for n, p in pages.items() if n.startswith("ifip18-")} == {1, 2, 3}


def test_ifip18_fonts_stay_on_the_page_host_and_are_4_aligned(pages: dict[str, PageSpec]) -> None:
    for page in pages.values():
        for o in page.objects:
            if o.type != "image":
                assert o.host == HOSTS[0], (page.name, o)
            if o.type == "other":
                assert o.bytes % 4 == 0 and o.path.endswith(".ttf")


def test_cellular_pages(pages: dict[str, PageSpec]) -> None:
    assert _objects(pages["cell-365x2k"]) == [2000] * 365
    assert _objects(pages["cell-10x435k"]) == [435_000] * 10
    for mb in (2, 8, 12):
        sizes = _objects(pages[f"cell-136-{mb}m"])
        assert len(sizes) == 136
        assert min(sizes) == 1000 and max(sizes) == 620_000
        assert sum(sizes) == mb * 1_000_000
        assert sizes != sorted(sizes)  # shuffled, so big objects are not all at the end


def test_student_pages(pages: dict[str, PageSpec]) -> None:
    expected = {
        "small": {14_000: 18, 80_000: 3}, "medium": {14_000: 40, 80_000: 7},
        "large": {14_000: 200, 80_000: 17}, "many-small": {14_000: 200},
        "many-large": {1_900_000: 25},
    }
    for label, shape in expected.items():
        sizes = _objects(pages[f"student-{label}"])
        assert {s: sizes.count(s) for s in set(sizes)} == shape, label


def test_conext_grid(pages: dict[str, PageSpec]) -> None:
    totals = {"40k": 40_000, "140k": 140_000, "550k": 550_000, "2300k": 2_300_000,
              "9m": 9_000_000}
    for count in (6, 48, 96, 192):
        for label, total in totals.items():
            sizes = _objects(pages[f"conext-{count}x{label}"])
            assert len(sizes) == count and sum(sizes) == total
            assert max(sizes) - min(sizes) <= 1


def test_conext_httpx_pages_split_bytes_evenly_over_two_hosts(pages: dict[str, PageSpec]
                                                             ) -> None:
    for label, per_host in (("2300k", 2_300_000), ("9m", 9_000_000)):
        objs = [o for o in pages[f"conext-httpx-2x{label}"].objects if o.path != INDEX]
        for host in ("a.test", "b.test"):
            mine = [o.bytes for o in objs if o.host == host]
            assert len(mine) == 6 and abs(sum(mine) - per_host) <= 6, (label, host)
        assert {o.host for o in objs} == {"a.test", "b.test"}


def test_mininet_pages(pages: dict[str, PageSpec]) -> None:
    for count in (1, 10, 100):
        page = pages[f"mininet-{count}"]
        assert _objects(page) == [100_000] * count
        assert "no file size" in page.source


def test_every_page_cites_a_seed_paper_and_puts_html_first(pages: dict[str, PageSpec]) -> None:
    for page in pages.values():
        assert re.search(r"shared/seeds/00[0-4]", page.source), page.name
        assert page.objects[0].path == INDEX and page.objects[0].host == HOSTS[0]
        assert len({o.path for o in page.objects}) == len(page.objects)
        assert all(o.host in HOSTS for o in page.objects)


def test_custom_page_spec() -> None:
    page = custom_page(7, 70_000, hosts=3)
    assert page.name == "custom-7x70k-h3"
    assert _objects(page) == [10_000] * 7
    assert page.hosts == HOSTS
    assert dict(page.params) == {"objects": 7, "size": 70_000, "hosts": 3}
    assert custom_page(3, 1001, name="odd").name == "odd"
    assert sum(_objects(custom_page(3, 1001, name="odd"))) == 1001


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"objects": 0, "size": 1000}, "--objects must be 1..5000"),
        ({"objects": 5001, "size": 10**9}, "--objects must be 1..5000"),
        ({"objects": 10, "size": 999}, "too small for 10 objects"),
        ({"objects": 1, "size": 1000, "hosts": 4}, "--hosts must be 1..3"),
        ({"objects": 1, "size": 1000, "hosts": 0}, "--hosts must be 1..3"),
        ({"objects": 1, "size": 1000, "name": "Bad Name"}, "must be kebab-case"),
        ({"objects": 1, "size": 1000, "name": "../etc"}, "must be kebab-case"),
        ({"objects": 1, "size": 1000, "name": "mininet-10"}, "is a catalog page"),
    ],
)
def test_custom_page_errors_are_one_line(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as info:
        custom_page(**kwargs)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "value"),
    [("435k", 435_000), ("2.3MB", 2_300_000), ("9m", 9_000_000), ("1900KB", 1_900_000),
     ("64KiB", 65_536), ("12345", 12_345), (" 2 mb ", 2_000_000), ("1g", 10**9)],
)
def test_parse_size(text: str, value: int) -> None:
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "k", "2x", "1.5", "-3k", "1.0001k", "3i"])
def test_parse_size_errors(text: str) -> None:
    with pytest.raises(ValueError, match="size"):
        parse_size(text)
