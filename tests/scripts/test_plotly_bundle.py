"""The plotly.js the charts load: plotly's cartesian bundle at the plotly package's own version, checked
against its pinned hash, with the package's full bundle as the fallback when the registry cannot be reached."""

import io
import json
import tarfile

import pytest
from apptest_helpers import ROOT

from scripts import plotly_bundle as pb


def test_the_pinned_bundle_is_the_plotly_packages_own_version():
    """Python's figures are written for the plotly.js the plotly package ships: the page must load that version."""
    assert pb.bundle_version(pb.PACKAGE_BUNDLE) == pb.VERSION


def test_the_served_bundle_has_that_version_too():
    if not pb.BUNDLE.exists():
        pytest.skip("static/plotly.min.js is put there by make setup")
    assert pb.bundle_version(pb.BUNDLE) == pb.VERSION


def tarball(member: bytes) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        info = tarfile.TarInfo(pb.MEMBER)
        info.size = len(member)
        archive.addfile(info, io.BytesIO(member))
    return out.getvalue()


class Response(io.BytesIO):
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_a_tarball_that_does_not_match_its_hash_is_refused_and_the_full_bundle_serves(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(pb, "BUNDLE", tmp_path / "static" / "plotly.min.js")
    monkeypatch.setattr(pb, "STATIC", tmp_path / "static")
    monkeypatch.setattr(pb.urllib.request, "urlopen", lambda *a, **k: Response(tarball(b"/* not plotly */")))
    assert pb.ensure_bundle() == "full"
    assert pb.BUNDLE.read_bytes() == pb.PACKAGE_BUNDLE.read_bytes()
    assert "does not match its pinned integrity hash" in capsys.readouterr().err


def test_the_matching_tarball_is_unpacked_in_place(tmp_path, monkeypatch):
    """Checked with a tarball made here and its own hash pinned: the file that lands is the tarball's member."""
    member = f"/**\n* {pb.HEADER}\n*/\n".encode() + b"window.Plotly = {};"
    data = tarball(member)
    monkeypatch.setattr(pb, "INTEGRITY", "sha512-" + pb.base64.b64encode(pb.hashlib.sha512(data).digest()).decode())
    monkeypatch.setattr(pb, "BUNDLE", tmp_path / "static" / "plotly.min.js")
    monkeypatch.setattr(pb, "STATIC", tmp_path / "static")
    monkeypatch.setattr(pb.urllib.request, "urlopen", lambda *a, **k: Response(data))
    assert pb.ensure_bundle() == "cartesian"
    assert pb.BUNDLE.read_bytes() == member
    assert pb.ensure_bundle() == "cartesian"  # in place already: nothing fetched again


def test_the_chart_themes_are_streamlits_light_and_dark():
    themes = json.loads((ROOT / "static" / "chart_themes.json").read_text(encoding="utf-8"))
    assert set(themes) == {"light", "dark"}
    light, dark = themes["light"]["layout"], themes["dark"]["layout"]
    assert light["paper_bgcolor"].upper() == "#FFFFFF" and dark["paper_bgcolor"].upper() != "#FFFFFF"
    assert light["font"]["family"] == dark["font"]["family"]
