"""Reading the server's /metrics text (Prometheus exposition), for every suite under e2e/."""
import re

_SAMPLE = re.compile(r'^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def sample_of(text, name, **labels):
    """The sum of the samples of `name` whose labels include `labels` in one /metrics text."""
    total = 0.0
    for line in text.splitlines():
        m = _SAMPLE.match(line)
        if m and m.group(1) == name:
            got = dict(_LABEL.findall(m.group(2) or ""))
            if all(got.get(k) == v for k, v in labels.items()):
                total += float(m.group(3))
    return total
