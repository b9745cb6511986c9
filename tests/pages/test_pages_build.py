"""Building the corpus on disk: determinism, caching, manifests, and content a browser accepts."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from protolens.pages import (
    HOSTS,
    INDEX,
    MANIFEST,
    UnknownPage,
    add_custom_page,
    catalog,
    ensure_corpus,
    ensure_pages,
    read_manifest,
)

SAMPLE = ["ifip18-youtube", "ifip18-vk", "cell-136-2m", "conext-192x40k"]
"""Pages that between them have every type and format (fonts, iframes, gif, tiny images)."""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pages")
    built = ensure_pages(root)
    assert [m.name for m, _ in built] == [p.name for p in catalog()]
    assert all(fresh for _, fresh in built)
    return root


def _digests(page_dir: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(page_dir.iterdir())}


def test_whole_corpus_sizes_match_manifests(corpus: Path) -> None:
    total = 0
    for spec in catalog():
        page_dir = corpus / spec.name
        m = read_manifest(page_dir)
        assert m is not None
        assert m.spec_hash == spec.spec_hash()
        on_disk = {p.name: p.stat().st_size for p in page_dir.iterdir() if p.name != MANIFEST}
        assert on_disk == {o.path: o.bytes for o in m.objects}
        assert m.total_bytes == sum(on_disk.values()) == spec.total_bytes
        total += m.total_bytes
    assert total == sum(p.total_bytes for p in catalog())
    assert not [p for p in corpus.iterdir() if p.name.startswith(".")]  # no temp dirs left


def test_same_spec_gives_byte_identical_files(corpus: Path, tmp_path: Path) -> None:
    ensure_corpus(tmp_path, SAMPLE)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(SAMPLE)  # only those built
    for name in SAMPLE:
        assert _digests(tmp_path / name) == _digests(corpus / name), name


def test_manifest_is_complete(corpus: Path) -> None:
    doc = json.loads((corpus / "ifip18-instagram" / MANIFEST).read_text())
    assert set(doc) >= {"name", "source", "url", "hosts", "objects", "total_bytes", "seed",
                        "spec_hash"}
    assert doc["url"] == "https://a.test/ifip18-instagram/"
    assert doc["hosts"] == list(HOSTS)
    assert doc["total_bytes"] == 1_409_000
    assert "Table I" in doc["source"] and "ProtoLens choices" in doc["source"]
    assert len(doc["objects"]) == 37
    for obj in doc["objects"]:
        assert set(obj) == {"path", "host", "type", "bytes", "url", "format"}
        if obj["path"] != INDEX:
            assert obj["url"] == f"https://{obj['host']}/ifip18-instagram/{obj['path']}"
    assert {o["host"] for o in doc["objects"]} == set(HOSTS)


def test_index_references_every_object_once_and_loads_it_before_onload(corpus: Path) -> None:
    for spec in catalog():
        html = (corpus / spec.name / INDEX).read_text()
        urls = re.findall(r'(?:src|href)="(https://[^"]+)"|url\("(https://[^"]+)"\)', html)
        found = [a or b for a, b in urls]
        expected = [f"https://{o.host}/{spec.name}/{o.path}" for o in spec.objects[1:]]
        assert sorted(found) == sorted(expected), spec.name  # each exactly once, no others
        assert not re.search(r"https://[a-z.]+:\d", html)  # no port: served on 443
        for bad in ("async", "defer", "lazy", "preload", "prefetch", "module"):
            assert bad not in re.sub(r"<!--.*?-->", "", html, flags=re.S), (spec.name, bad)


def test_index_uses_every_font_it_declares(corpus: Path) -> None:
    html = (corpus / "ifip18-youtube" / INDEX).read_text()
    families = re.findall(r'font-family: "(pl-font-\d+)"; src:', html)
    assert len(families) == 20
    for fam in families:
        assert f'<p class="{fam}">A</p>' in html


def test_every_image_decodes(corpus: Path) -> None:
    formats = set()
    for path in corpus.rglob("img-*"):
        with Image.open(path) as img:
            img.load()
            formats.add(img.format)
    assert formats == {"PNG", "JPEG", "GIF"}


def test_fonts_parse(corpus: Path) -> None:
    from fontTools.ttLib import TTFont  # type: ignore[import-untyped]

    fonts = list(corpus.glob("*/font-*.ttf"))
    assert len(fonts) == sum(p.counts()["other"] for p in catalog())
    for path in fonts:
        assert TTFont(str(path)).getBestCmap()[ord("A")] == "A"


CHECK_ALL = """
const fs = require("fs"), vm = require("vm");
let bad = 0;
for (const f of process.argv.slice(1)) {
  try { new vm.Script(fs.readFileSync(f, "utf8"), { filename: f }); }  // compile only, as --check
  catch (e) { console.log(f + ": " + e.message); bad++; }
}
process.exit(bad ? 1 : 0);
"""


def test_every_script_compiles_in_node(corpus: Path, tmp_path: Path) -> None:
    """One node process compiles every script (``node --check`` per file is covered in
    test_pages_content and would take seconds here); a broken script is caught too."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    scripts = sorted(str(p) for p in corpus.glob("*/js-*.js"))
    assert len(scripts) == sum(p.counts()["js"] for p in catalog())
    ok = subprocess.run([node, "-e", CHECK_ALL, *scripts], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout
    broken = tmp_path / "broken.js"
    broken.write_text(Path(scripts[0]).read_text().replace('";', "", 1))  # unclosed string
    bad = subprocess.run([node, "-e", CHECK_ALL, scripts[0], str(broken)], capture_output=True,
                         text=True)
    assert bad.returncode == 1 and "broken.js" in bad.stdout


def test_cached_pages_are_not_rewritten(tmp_path: Path) -> None:
    names = ["ifip18-baidu", "mininet-10"]
    first = ensure_pages(tmp_path, names)
    assert [fresh for _, fresh in first] == [True, True]
    stamp = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    second = ensure_pages(tmp_path, names)
    assert [fresh for _, fresh in second] == [False, False]
    assert [m for m, _ in second] == [m for m, _ in first]
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == stamp


@pytest.mark.parametrize("damage", ["truncate", "delete", "manifest", "hash"])
def test_damaged_pages_are_rebuilt(tmp_path: Path, damage: str) -> None:
    (m, _), = ensure_pages(tmp_path, ["ifip18-baidu"])
    page = tmp_path / "ifip18-baidu"
    before = _digests(page)
    victim = page / m.objects[3].path
    if damage == "truncate":
        victim.write_bytes(victim.read_bytes()[:-1])
    elif damage == "delete":
        victim.unlink()
    elif damage == "manifest":
        (page / MANIFEST).write_text("{not json")
    else:
        doc = json.loads((page / MANIFEST).read_text())
        doc["spec_hash"] = "0" * 64
        (page / MANIFEST).write_text(json.dumps(doc))
    (_, fresh), = ensure_pages(tmp_path, ["ifip18-baidu"])
    assert fresh
    assert _digests(page) == before


def test_unknown_page_names_raise(tmp_path: Path) -> None:
    with pytest.raises(UnknownPage, match="unknown page.*: nope, other"):
        ensure_corpus(tmp_path, ["ifip18-baidu", "nope", "other"])
    assert not (tmp_path / "ifip18-baidu").exists()  # nothing built on a bad request


def test_custom_page_is_built_cached_and_listed(tmp_path: Path) -> None:
    m = add_custom_page(tmp_path, objects=12, size=120_000, hosts=2)
    assert m.name == "custom-12x120k-h2"
    assert dict(m.params) == {"objects": 12, "size": 120_000, "hosts": 2}
    assert m.hosts == ("a.test", "b.test")
    assert sum(o.bytes for o in m.objects if o.path != INDEX) == 120_000
    for o in m.objects[1:]:
        with Image.open(tmp_path / m.name / o.path) as img:
            img.load()
    # found again by name, from its manifest, and cached
    (again, fresh), = ensure_pages(tmp_path, [m.name])
    assert again == m and not fresh
    # same name, new arguments: rebuilt in place
    m2 = add_custom_page(tmp_path, objects=3, size=3000, name=m.name)
    assert len(m2.objects) == 4
    assert sorted(p.name for p in (tmp_path / m.name).iterdir()) == sorted(
        [o.path for o in m2.objects] + [MANIFEST])


def test_listing_everything_includes_custom_pages(corpus: Path) -> None:
    add_custom_page(corpus, objects=2, size=2000, name="tiny")
    try:
        names = [m.name for m in ensure_corpus(corpus)]
        assert names[-1] == "tiny" and len(names) == len(catalog()) + 1
    finally:
        shutil.rmtree(corpus / "tiny")
