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


async def measured_runs(count, measure):
    """`await measure()` `count` times (each run prints its own table and returns its results), with a
    header per run when there are several; returns every run's results, for `over_runs`."""
    runs = []
    for run in range(count):
        if count > 1:
            print(f"-- run {run + 1} of {count}", flush=True)
        runs.append(await measure())
    return runs


def _median(values):
    v = sorted(values)
    n = len(v)
    return None if n == 0 else (v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2)


def median_range(values, fmt="{:.2f}"):
    """`values`' median and range, as "median [min-max]"."""
    return f"{fmt.format(_median(values))} [{fmt.format(min(values))}-{fmt.format(max(values))}]"


def over_runs(runs, rss_key, rss_label, rss_cap=None):
    """The figures of a point measured `len(runs)` times (`runs`: each run's results, one per server):
    per server the median and range of CPU per delivered packet and of `rss_key`, and Atrium's CPU
    over the cheaper anchor of the same run; the targets judged on the medians (CPU at most a third of
    the cheaper anchor, RSS at or below every anchor's, and at most `rss_cap` KiB when given, judged
    apart). Nothing asserted."""
    if len(runs) < 2:
        return
    names = []
    for results in runs:
        for r in results:
            if "error" not in r and r["name"] not in names:
                names.append(r["name"])

    def figures(name, key):
        return [r[key] for results in runs for r in results
                if r["name"] == name and "error" not in r and r.get(key) is not None]

    print(f"  over {len(runs)} runs, median [range]:")
    for key, label, fmt in (("us_per_packet", "CPU per delivered packet (us)", "{:.2f}"), (rss_key, rss_label, "{:.0f}")):
        cells = [f"{n} {median_range(figures(n, key), fmt)}" for n in names if figures(n, key)]
        print(f"    {label}: " + ", ".join(cells))
    anchors = [n for n in names if n in Table.ANCHORS]
    if "Atrium" not in names or not anchors:
        print("  targets over the runs: not judged (Atrium or every anchor had no figures)")
        return
    ratios = []
    for results in runs:
        ok = {r["name"]: r for r in results if "error" not in r}
        cheaper = [ok[n]["us_per_packet"] for n in anchors if n in ok and ok[n]["us_per_packet"]]
        if "Atrium" in ok and ok["Atrium"]["us_per_packet"] and cheaper:
            ratios.append(ok["Atrium"]["us_per_packet"] / min(cheaper))
    notes = []
    if ratios:
        met = _median(ratios) <= 1 / 3
        notes.append(f"Atrium's CPU over the cheaper anchor {median_range(ratios)} vs 0.33: "
                     f"{'met' if met else 'NOT met'}")
    rss = {n: _median(figures(n, rss_key)) for n in names if figures(n, rss_key)}
    if "Atrium" in rss and any(n in rss for n in anchors):
        lowest = min(rss[n] for n in anchors if n in rss)
        notes.append(f"{rss_label} {rss['Atrium']:.0f} vs the anchors' {lowest:.0f} at most: "
                     f"{'met' if rss['Atrium'] <= lowest else 'NOT met'}")
    if rss_cap is not None and "Atrium" in rss:
        notes.append(f"and vs {rss_cap:.0f}: {'met' if rss['Atrium'] <= rss_cap else 'NOT met'}")
    print("  targets over the runs (medians): " + "; ".join(notes))
