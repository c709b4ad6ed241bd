"""What the benchmarks share: stopping a server process, and the side-by-side table of figures with
Atrium/Janus ratios that both print."""
import subprocess


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
    """Rows of one figure per server; `ratio` rows get Atrium/Janus (the first column over the last)
    when both servers ran: the first column Atrium, the last Janus (Atrium may have several)."""

    def __init__(self, results, min_column=12):
        self.names = [r["name"] for r in results]
        self.both = len(results) >= 2 and self.names[0] == "Atrium" and self.names[-1] == "Janus"
        self.min_column = min_column
        self.rows = []

    def row(self, label, values, fmt="{}", ratio=False):
        cells = ["-" if v is None else fmt.format(v) for v in values]
        r = f"{values[0] / values[-1]:.2f}" if ratio and self.both and values[0] is not None and values[-1] else ""
        self.rows.append((label, cells, r))

    def print(self):
        width = max(len(r[0]) for r in self.rows) + 2
        col = max(self.min_column, max(len(c) for r in self.rows for c in r[1]) + 2)
        ratio = f"{'Atrium/Janus':>14}" if self.both else ""
        print(f"{'':{width}}" + "".join(f"{n:>{col}}" for n in self.names) + ratio)
        for label, cells, rat in self.rows:
            print(f"{label:{width}}" + "".join(f"{c:>{col}}" for c in cells) + (f"{rat:>14}" if self.both else ""))
