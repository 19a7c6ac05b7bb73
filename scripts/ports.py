"""Which program holds a port: `make run` checks its port is free before it starts the server, and the
warm-up checks that the server answering on the port is the one `make run` started.

    .venv/bin/python -m scripts.ports --check 8501     # exit 1, with one line saying why, if busy

Linux only for the owner of a port (it reads /proc); elsewhere the owner is unknown and the warm-up
trusts the health check alone.
"""

from __future__ import annotations

import argparse
import errno
import os
import socket
import sys
from pathlib import Path

PROC = Path("/proc")
LISTEN = "0A"  # the TCP state of a listening socket in /proc/net/tcp


def port_is_free(port: int) -> bool:
    """True if a server could listen on this port on every interface, as Streamlit does."""
    for family, address in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server does: TIME_WAIT is free
                s.bind((address, port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                return False
            # no IPv6 on this machine, say: that family cannot be busy
    return True


def next_free_port(port: int, tries: int = 50) -> int | None:
    return next((p for p in range(port + 1, port + 1 + tries) if p < 65536 and port_is_free(p)), None)


def busy_message(port: int) -> str:
    other = next_free_port(port)
    pick = f"make run PORT={other}" if other else "make run PORT=<another port>"
    return f"make run: port {port} is busy (another program is listening there); start on another port: {pick}"


def listening_inodes(port: int) -> set[str]:
    """The socket inodes listening on this port, from /proc/net/tcp and tcp6."""
    inodes = set()
    for table in ("tcp", "tcp6"):
        path = PROC / "net" / table
        if not path.exists():
            continue
        for line in path.read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == LISTEN:
                inodes.add(fields[9])
    return inodes


def listens_on(pid: int, port: int) -> bool | None:
    """True if process pid holds a socket listening on port; None where this cannot be read (no /proc)."""
    if not (PROC / "net" / "tcp").exists():
        return None
    inodes = listening_inodes(port)
    if not inodes:
        return False
    wanted = {f"socket:[{inode}]" for inode in inodes}
    try:
        fds = list((PROC / str(pid) / "fd").iterdir())
    except OSError:  # the process has gone, or is not ours to read
        return False
    for fd in fds:
        try:
            if os.readlink(fd) in wanted:
                return True
        except OSError:  # closed while we looked
            continue
    return False


def is_alive(pid: int) -> bool:
    """True while the process runs: an exited one not yet reaped by its parent (a zombie) is not alive."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = (PROC / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True  # no /proc: the signal said it exists
    return state not in ("Z", "X")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", type=int, required=True, metavar="PORT", help="exit 1 if this port is busy")
    args = ap.parse_args()
    if port_is_free(args.check):
        return 0
    print(busy_message(args.check), file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
