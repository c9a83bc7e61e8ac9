"""How far a run of many runs has got, on a terminal or off one, and what the estimators warned.

On a terminal the runner shows a tqdm bar. Off one (a log file, CI, ``nohup``) a bar would
print nothing useful, so :class:`ProgressLines` writes one short line every ``interval``
seconds (:data:`INTERVAL_ENV`, default :data:`DEFAULT_INTERVAL_S`) from a timer thread, even
while one long run holds the main thread: runs done of the total, time elapsed and an ETA
from the mean time per run so far.

Warnings an estimator raises inside a run (scikit-learn's ``ConvergenceWarning``, ...) are
collected with the run (:func:`collect_warnings`), written one line per run to the target's
``warnings.log`` and summed up in one line at the end (:class:`WarningLog`), instead of
reaching stderr raw, once per fit, from every worker.
"""

import logging
import os
import sys
import threading
import time
import warnings
from collections import Counter
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

__all__ = ["ProgressLines", "progress_reporter", "collect_warnings", "WarningLog",
           "DEFAULT_INTERVAL_S", "INTERVAL_ENV"]

logger = logging.getLogger(__name__)

DEFAULT_INTERVAL_S = 60.0
INTERVAL_ENV = "MLKIT_PROGRESS_INTERVAL"


def _seconds(s):
    from .report.reproduction_page import format_seconds

    return format_seconds(s)


class ProgressLines:
    """One line per ``interval`` seconds on ``stream``: ``mlkit: <label>: 12/240 runs done,
    4 min 5 s elapsed, ETA 1 h 2 min``.

    ``update(n)`` counts finished runs; ``tick()`` writes the line when ``interval`` seconds
    have passed since the last one (``start()`` runs it from a daemon timer thread; tests
    call it themselves with their own ``clock``); ``close()`` stops the thread."""

    def __init__(self, total, label, *, stream=None, interval=None, clock=time.monotonic):
        self.total, self.label = int(total), label
        self.stream = stream if stream is not None else sys.stderr
        self.interval = float(interval if interval is not None else
                              os.environ.get(INTERVAL_ENV) or DEFAULT_INTERVAL_S)
        self.clock = clock
        self.done = 0
        self.t0 = self.last = clock()
        self._stop = threading.Event()
        self._thread = None
        self._lock = threading.Lock()

    def update(self, n=1):
        with self._lock:
            self.done += n

    def line(self):
        elapsed = self.clock() - self.t0
        with self._lock:
            done = self.done
        if done:
            eta = _seconds(elapsed / done * (self.total - done))
        else:
            eta = "unknown (no run finished yet)"
        return (f"mlkit: {self.label}: {done}/{self.total} runs done, {_seconds(elapsed)} "
                f"elapsed, ETA {eta}")

    def tick(self):
        """Write the line if ``interval`` seconds have passed since the last; whether it did."""
        now = self.clock()
        if now - self.last < self.interval:
            return False
        self.last = now
        self.stream.write(self.line() + "\n")
        self.stream.flush()
        return True

    def start(self):
        def beat():
            while not self._stop.wait(max(min(self.interval, 1.0), 0.01)):
                self.tick()

        self._thread = threading.Thread(target=beat, name="mlkit-progress", daemon=True)
        self._thread.start()
        return self

    def close(self):
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def progress_reporter(total, label, stream=None):
    """A tqdm bar when ``stream`` (default stderr) is a terminal, else started
    :class:`ProgressLines`; both have ``update(n)`` and are context managers."""
    stream = stream if stream is not None else sys.stderr
    if getattr(stream, "isatty", lambda: False)():
        from tqdm import tqdm

        return tqdm(total=total, desc=label, unit="run", file=stream)
    return ProgressLines(total, label, stream=stream).start()


@contextmanager
def collect_warnings():
    """Yield a list that receives ``(category name, first line of the message)`` of every
    warning raised in the block that the active filters would show (a filter that turns a
    warning into an error still raises it)."""
    found = []
    with warnings.catch_warnings(record=True) as caught:
        yield found
    found += [(w.category.__name__, str(w.message).strip().splitlines()[0] if str(w.message)
               .strip() else "") for w in caught]


class WarningLog:
    """The warnings of an invocation's runs: ``add(run, warnings)`` appends one line per run
    to ``path`` (``<run>: ConvergenceWarning x3: lbfgs failed to converge ...``);
    ``summary()`` is one line for all of them, or None when there were none."""

    def __init__(self, path, label):
        self.path, self.label = Path(path), label
        self.counts = Counter()
        self.runs = 0
        self._started = False

    def add(self, run, found):
        if not found:
            return
        counts = Counter(tuple(w) for w in found)
        self.counts.update(counts)
        self.runs += 1
        from ._io import check_writable

        check_writable(self.path.parent)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            if not self._started:
                stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
                fh.write(f"== {self.label}, {stamp}\n")
                self._started = True
            for (category, message), n in sorted(counts.items()):
                fh.write(f"{run}: {category} x{n}: {message}\n")

    def summary(self):
        if not self.counts:
            return None
        by_kind = Counter()
        for (category, _), n in self.counts.items():
            by_kind[category] += n
        kinds = ", ".join(f"{c} x{n}" for c, n in sorted(by_kind.items(), key=lambda kv: -kv[1]))
        return (f"{self.label}: {sum(by_kind.values())} estimator warnings in {self.runs} runs "
                f"({kinds}); each run's are in {self.path}")
