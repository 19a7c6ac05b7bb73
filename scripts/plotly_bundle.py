"""Put the plotly.js that the lab's charts load into static/ (make setup runs this).

    python -m scripts.plotly_bundle

Every chart the lab draws is a heatmap, a bar chart or a line, so the page loads plotly's cartesian
bundle (about a third of the full one's size, and as much less to parse on a first visit), fetched
from the npm registry at the version the plotly package ships and checked against the registry's
integrity hash. Without the registry it falls back to the plotly package's own full bundle, the
same plotly.js version, and says so: charts look the same, a first visit is slower.
"""

from __future__ import annotations

import base64
import hashlib
import io
import shutil
import sys
import tarfile
import urllib.request
from pathlib import Path

import plotly

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "static"
BUNDLE = STATIC / "plotly.min.js"  # what ui/frame/chart_element loads, as app/static/plotly.min.js
PACKAGE_BUNDLE = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"

# plotly.js-cartesian-dist-min, pinned: the same plotly.js version as the plotly package's bundle (a test
# checks that they agree), with the registry's sha512 of its tarball.
VERSION = "4.1.1"
TARBALL = f"https://registry.npmjs.org/plotly.js-cartesian-dist-min/-/plotly.js-cartesian-dist-min-{VERSION}.tgz"
INTEGRITY = "sha512-o8GrFeusncwBIxbBynRJpY4pkgVB6caM+JLpwrLYbbsO7dZ8FJ+SVN2Fr+L7kiG/Z6w4P5O0Jus/Qr5EefHVeg=="
MEMBER = "package/plotly-cartesian.min.js"
HEADER = f"plotly.js (cartesian - minified) v{VERSION}"


def bundle_version(path: Path) -> str:
    """The version a plotly.js bundle names in its header comment ('' when it names none)."""
    head = path.read_text(encoding="utf-8", errors="replace")[:300] if path.exists() else ""
    marker = head.find(" v")
    return head[marker + 2 :].split()[0] if "plotly.js" in head and marker >= 0 else ""


def is_cartesian(path: Path) -> bool:
    return path.exists() and HEADER in path.read_text(encoding="utf-8", errors="replace")[:300]


def fetch_cartesian(timeout: float = 60) -> bytes:
    """The cartesian bundle's file, from the pinned tarball once its hash matches (ValueError if not)."""
    with urllib.request.urlopen(TARBALL, timeout=timeout) as response:
        tarball = response.read()
    digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball).digest()).decode()
    if digest != INTEGRITY:
        raise ValueError(f"{TARBALL} does not match its pinned integrity hash")
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        member = archive.extractfile(MEMBER)
        if member is None:
            raise ValueError(f"{MEMBER} is not in {TARBALL}")
        return member.read()


def ensure_bundle() -> str:
    """static/plotly.min.js in place; returns which bundle it is."""
    if is_cartesian(BUNDLE):
        return "cartesian"
    STATIC.mkdir(exist_ok=True)
    try:
        data = fetch_cartesian()
    except (OSError, ValueError) as why:
        if not BUNDLE.exists():
            shutil.copyfile(PACKAGE_BUNDLE, BUNDLE)
        print(f"plotly's cartesian bundle could not be fetched ({why}): charts load the full bundle", file=sys.stderr)
        return "full"
    tmp = BUNDLE.with_suffix(".part")
    tmp.write_bytes(data)
    tmp.replace(BUNDLE)
    return "cartesian"


if __name__ == "__main__":
    print(f"static/plotly.min.js: plotly.js {ensure_bundle()} bundle")
