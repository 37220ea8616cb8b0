"""A command run with its stderr on a pseudo-terminal of 80 columns (bars are drawn only to a
terminal, and tqdm draws an empty bar on a terminal of zero columns, a fresh pty's size)."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import termios
from typing import Any, List, Tuple


def run_on_terminal(command: List[str], **options: Any) -> Tuple[int, bytes, bytes]:
    """``(returncode, stdout, what the terminal on stderr received)``; ``options`` go to subprocess.run."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=follower, **options)
        os.close(follower)
        follower = -1
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end is closed: everything is read
                break
            if not chunk:
                break
            seen += chunk
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    return done.returncode, done.stdout, seen
