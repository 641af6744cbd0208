#!/usr/bin/env python3
"""report.py DATA_DIR OUT_DIR: turns the samples bench/report.sh collected (DATA_DIR/*.csv and
meta.env) into OUT_DIR/performance.md and OUT_DIR/performance/*.png.

A section whose samples are missing says so instead of showing a table or a plot."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import report_md  # noqa: E402
import report_plots  # noqa: E402
from report_data import group, read_meta, read_rows  # noqa: E402


def main(argv):
    if len(argv) != 3:
        print("usage: report.py DATA_DIR OUT_DIR", file=sys.stderr)
        return 2
    data, out = argv[1], argv[2]
    png = os.path.join(out, "performance")
    os.makedirs(png, exist_ok=True)
    meta = read_meta(os.path.join(data, "meta.env"))
    doc = [report_md.header(meta)]
    made = []

    # Each section: its samples file, a reduction, its plots and its text.
    def p2p(rows):
        st = group(rows, ["tool", "metric", "bytes"], "value")
        report_plots.plot_latency(st, meta, os.path.join(png, "p2p_latency.png"))
        report_plots.plot_bandwidth(st, meta, os.path.join(png, "p2p_bandwidth.png"))
        return ["p2p_latency.png", "p2p_bandwidth.png"], report_md.p2p_section(st, meta)

    def modes(rows):
        st = group(rows, ["mode", "threads"], "msg_per_s")
        report_plots.plot_msgrate(st, meta, os.path.join(png, "msgrate_modes.png"))
        return ["msgrate_modes.png"], report_md.msgrate_section(st, meta)

    def coll(rows):
        st = group(rows, ["prog", "collective", "bytes"], "avg_us")
        report_plots.plot_coll(st, meta, os.path.join(png, "collectives.png"))
        return ["collectives.png"], report_md.coll_section(st, meta)

    def am(rows):
        lat = group(rows, ["config", "kind", "bytes"], "latency_us_median")
        tput = group(rows, ["config", "kind", "bytes"], "throughput_gbps")
        report_plots.plot_am(lat, tput, meta, os.path.join(png, "am.png"))
        return ["am.png"], report_md.am_section(lat, tput, meta)

    sections = [("p2p.csv", "p2p", "Point-to-point", p2p), ("msgrate.csv", "modes", "Message rate by threading mode", modes),
                ("coll.csv", "coll", "Collectives", coll), ("am.csv", "am", "Active messages", am)]
    for csv_name, key, title, make in sections:
        rows = read_rows(os.path.join(data, csv_name))
        if not rows:
            doc.append(f"\n## {title}\n\nNot measured in this run: {meta.get(key + '_status', 'no samples (' + csv_name + ')')}\n")
            continue
        pngs, text = make(rows)
        made += pngs
        doc.append(text)

    with open(os.path.join(out, "performance.md"), "w") as f:
        f.write("".join(doc))
    print(f"report.py: wrote {os.path.join(out, 'performance.md')} and {len(made)} plot(s): {' '.join(made)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
