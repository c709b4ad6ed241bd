"""What the benchmarks share: stopping a server process, a percentile, and the side-by-side table of
figures with Atrium/Janus ratios that both print."""
import subprocess


def percentile(values, p):
    """The nearest-rank percentile of `values` (p in 0..100); None when there are none."""
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, max(0, int(round(p / 100 * len(v) + 0.5)) - 1))]


def stop_process(proc):
    """SIGTERM, then SIGKILL after 10 s."""
    if proc and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class Table:
    """Rows of one figure per server; `ratio` rows get Atrium over each anchor that ran (Janus, pion):
    the first column Atrium (Atrium may have several), then the anchors."""

    ANCHORS = ("Janus", "pion")

    def __init__(self, results, min_column=12):
        self.names = [r["name"] for r in results]
        self.anchors = [i for i, n in enumerate(self.names) if n in self.ANCHORS] if self.names[:1] == ["Atrium"] else []
        self.min_column = min_column
        self.rows = []

    def row(self, label, values, fmt="{}", ratio=False):
        cells = ["-" if v is None else fmt.format(v) for v in values]
        ratios = [f"{values[0] / values[i]:.2f}" if ratio and values[0] is not None and values[i] else ""
                  for i in self.anchors]
        self.rows.append((label, cells, ratios))

    def print(self):
        width = max(len(r[0]) for r in self.rows) + 2
        col = max(self.min_column, max(len(c) for r in self.rows for c in r[1]) + 2)
        heads = "".join(f"{'Atrium/' + self.names[i]:>14}" for i in self.anchors)
        print(f"{'':{width}}" + "".join(f"{n:>{col}}" for n in self.names) + heads)
        for label, cells, ratios in self.rows:
            print(f"{label:{width}}" + "".join(f"{c:>{col}}" for c in cells) + "".join(f"{r:>14}" for r in ratios))
