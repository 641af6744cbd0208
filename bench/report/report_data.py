"""Reads the CSV samples that bench/report.sh collects and reduces them to medians and spreads.

Every comparison script writes one row per run (a sample); this module groups them and gives,
per group, the median, the minimum, the maximum and how many runs there were."""
import csv
import os
import statistics


def read_rows(path):
    """The rows of a CSV file as dicts; [] when the file is missing or empty."""
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def read_meta(path):
    """meta.env: KEY=VALUE lines written by report.sh (values may contain '=')."""
    meta = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if "=" in line and not line.startswith("#"):
                    k, v = line.split("=", 1)
                    meta[k] = v
    return meta


class Stat:
    """Median, min, max and count of a list of samples."""

    def __init__(self, values):
        self.values = sorted(values)
        self.n = len(values)
        self.median = statistics.median(values) if values else None
        self.lo = self.values[0] if values else None
        self.hi = self.values[-1] if values else None


def group(rows, keys, value):
    """{tuple(row[k] for k in keys): Stat(of float(row[value]))}, skipping unparsable values."""
    acc = {}
    for r in rows:
        try:
            v = float(r[value])
        except (KeyError, TypeError, ValueError):
            continue
        acc.setdefault(tuple(r[k] for k in keys), []).append(v)
    return {k: Stat(v) for k, v in acc.items()}


def series(stats, prefix):
    """From group() keyed (prefix..., bytes): sorted [(bytes, Stat)] of one prefix."""
    out = [(int(k[-1]), s) for k, s in stats.items() if k[:-1] == prefix]
    return sorted(out)
