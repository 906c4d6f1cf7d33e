"""What every worker process of a command's pool does first."""

from __future__ import annotations

import signal


def quiet_worker() -> None:
    """Leave Ctrl-C to the command: a terminal sends it to the whole process group,
    and each worker's KeyboardInterrupt printed a traceback from inside its pool
    before the command's own one line ("interrupted")."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
