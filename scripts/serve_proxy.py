"""The one nginx in front of a hall's boxes: deploy/nginx.conf rendered for their app processes.

    .venv/bin/python -m scripts.serve_proxy --upstream 10.0.0.11:8601 --upstream 10.0.0.11:8602 \\
        --upstream 10.0.0.12:8601 --upstream 10.0.0.12:8602 [--port 80] [--host 0.0.0.0]

Each box runs `python -m scripts.serve_box` (its processes, warmed and replaced if they die). nginx pins
a student to one process (ip_hash), skips a process that refuses connections for a few seconds, and
keeps its logs in a prefix folder it prints. docs/deploy.md walks through a hall of several boxes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scripts.scale_out import NGINX, render_config  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", action="append", required=True, help="host:port of one app process")
    ap.add_argument("--port", type=int, default=8500)
    ap.add_argument("--host", default="0.0.0.0", help="the address students reach")
    args = ap.parse_args()
    prefix = Path(tempfile.mkdtemp(prefix="encoder-lab-proxy-"))
    conf = render_config(prefix, args.port, list(args.upstream), host=args.host)
    print(f"nginx on {args.host}:{args.port} in front of {len(args.upstream)} process(es); logs in {prefix}")
    return subprocess.call([NGINX, "-p", str(prefix), "-c", str(conf)])


if __name__ == "__main__":
    sys.exit(main())
