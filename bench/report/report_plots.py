"""The PNG plots of docs/performance.md (matplotlib, Agg backend: no display needed).

Each figure states what it shows (median of N runs, bars from the fastest to the slowest run)
and, in a footer, the machine, the library versions and the date, so that a PNG copied out of
the report still says where its numbers come from."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after use("Agg"))

from report_data import series  # noqa: E402

# Shoal's published same-node figures (the Shoal paper, section IV-B): reference lines only.
SHOAL_SHORT_RTT_US = 93.6
SHOAL_LONG_4K_GBPS = 1.16


def footer(meta, runs):
    """Machine, versions, date and runs, for the bottom of every figure."""
    return (
        f"{meta.get('machine', '?')}\n"
        f"UCX {meta.get('ucx', '?')}, libfabric {meta.get('libfabric', '?')}, MPICH {meta.get('mpich', '?')}, "
        f"Open MPI {meta.get('ompi', '?')}; Weft {meta.get('weft', '?')}; {meta.get('date', '?')}; "
        f"{runs}; {meta.get('mode', '?')} run"
    )


def _finish(fig, meta, runs, path):
    fig.text(0.01, 0.005, footer(meta, runs), fontsize=6.5, va="bottom", ha="left", color="0.3")
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _line(ax, pts, label, style="-o"):
    """Medians joined by a line, with min..max error bars."""
    if not pts:
        return
    xs = [b for b, _ in pts]
    med = [s.median for _, s in pts]
    lo = [s.median - s.lo for _, s in pts]
    hi = [s.hi - s.median for _, s in pts]
    ax.errorbar(xs, med, yerr=[lo, hi], fmt=style, ms=3.5, capsize=2, lw=1.2, label=label)


def _bars(ax, items):
    """One bar per (label, Stat) with min..max error bars: a size-less collective (barrier)."""
    items = [(label, s) for label, s in items if s is not None]
    xs = range(len(items))
    ax.bar(xs, [s.median for _, s in items], 0.6, yerr=[[s.median - s.lo for _, s in items],
                                                         [s.hi - s.median for _, s in items]], capsize=3,
           color=["C0", "C1", "C2"][: len(items)])
    ax.set_xticks(list(xs), [label for label, _ in items])
    ax.grid(True, axis="y", alpha=0.3)


def _size_axis(ax):
    ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")
    ax.grid(True, which="both", alpha=0.3)


def _runs_text(stats):
    ns = sorted({s.n for s in stats.values()})
    if not ns:
        return "no runs"
    n = f"{ns[0]}" if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"
    return f"median of {n} run(s) per point, bars: min to max"


def _curves(path, meta, stats, title, ylabel, draw):
    """A size sweep on log-log axes: draw(ax) adds the lines."""
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    draw(ax)
    _size_axis(ax)
    ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7.5)
    _finish(fig, meta, _runs_text(stats), path)


def plot_latency(p2p, meta, path):
    names = [("weft-ucx", "Weft (UCX plugin), weft-pingpong"), ("ucx_perftest", "UCX ucx_perftest tag_lat"),
             ("weft-ofi", "Weft (libfabric plugin), weft-pingpong"), ("fi_pingpong", "libfabric fi_pingpong")]

    def draw(ax):
        for tool, label in names:
            _line(ax, series(p2p, (tool, "lat_us")), label, "-o" if "weft" in tool else "--s")

    _curves(path, meta, p2p, "Point-to-point latency: Weft vs UCX and libfabric\n(2 processes, one node)",
            "one-way latency (us), lower is better", draw)


def plot_bandwidth(p2p, meta, path):
    def draw(ax):
        _line(ax, series(p2p, ("weft-ucx", "MBps")), "Weft (UCX plugin), weft-msgrate: window of 64 + ack")
        _line(ax, series(p2p, ("ucx_perftest", "MBps")), "UCX ucx_perftest tag_bw: streaming", "--s")
        for tool, label in [("weft-ofi", "Weft (libfabric plugin), ping-pong"), ("fi_pingpong", "libfabric fi_pingpong")]:
            # Ping-pong bandwidth: bytes / one-way latency (10^6 bytes/s = bytes/us).
            conv = [(b, _Scaled(s, b)) for b, s in series(p2p, (tool, "lat_us")) if s.median]
            _line(ax, conv, label + " (bytes / one-way latency)", ":^")

    _curves(path, meta, p2p, "Point-to-point bandwidth: Weft vs UCX and libfabric\n(2 processes, one node)",
            "bandwidth (MB/s = 10^6 B/s), higher is better", draw)


class _Scaled:
    """bytes / latency of a latency Stat (min and max swap: the fastest run is the highest)."""

    def __init__(self, s, b):
        self.n = s.n
        self.median = b / s.median
        self.lo = b / s.hi
        self.hi = b / s.lo if s.lo else self.median


def plot_msgrate(modes, meta, path):
    order = ["raw-ucx", "single", "global", "vci", "stream", "mpich", "ompi"]
    labels = {"raw-ucx": "raw UCP (one worker per thread)", "single": "Weft single (no lock)",
              "global": "Weft global lock", "vci": "Weft per-VCI locks", "stream": "Weft streams",
              "mpich": "MPICH (1 thread)", "ompi": "Open MPI (1 thread)"}
    threads = sorted({int(k[1]) for k in modes})
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    width = 0.8 / len(order)
    for i, m in enumerate(order):
        xs, ys, lo, hi = [], [], [], []
        for j, t in enumerate(threads):
            s = modes.get((m, str(t)))
            if s is None:
                continue
            xs.append(j + (i - len(order) / 2 + 0.5) * width)
            ys.append(s.median / 1e6)
            lo.append((s.median - s.lo) / 1e6)
            hi.append((s.hi - s.median) / 1e6)
        if xs:
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=labels[m])
    ax.set_xticks(range(len(threads)), [f"T={t}" for t in threads])
    ax.set_xlabel("thread pairs (each thread of rank 0 streams to its peer thread on rank 1)")
    ax.set_ylabel("M msg/s (8 B, all threads), higher is better")
    ax.set_title("Message rate by threading mode (MPIX Stream paper, Figure 3)\nand the same loop on MPICH and Open MPI (T=1)", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=7.5)
    _finish(fig, meta, _runs_text(modes), path)


def plot_coll(coll, meta, path):
    colls = []
    for k in coll:
        if k[1] not in colls:
            colls.append(k[1])
    n = max(1, len(colls))
    cols = 3 if n > 2 else n
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows + 0.6), squeeze=False)
    names = [("weft", "Weft"), ("mpich", "MPICH"), ("ompi", "Open MPI")]
    for idx, c in enumerate(colls):
        ax = axes[idx // cols][idx % cols]
        if {k[2] for k in coll if k[1] == c} == {"0"}:
            _bars(ax, [(label, coll.get((prog, c, "0"))) for prog, label in names])
            ax.set_title(c, fontsize=10)
            ax.set_ylabel("latency (us)")
            continue
        for prog, label in names:
            _line(ax, series(coll, (prog, c)), label, "-o" if prog == "weft" else "--s")
        _size_axis(ax)
        ax.set_yscale("log")
        ax.set_title(c, fontsize=10)
        ax.set_ylabel("latency (us)")
        ax.legend(fontsize=7)
    for idx in range(len(colls), rows * cols):
        axes[idx // cols][idx % cols].axis("off")
    fig.suptitle(f"Collectives: Weft vs MPICH vs Open MPI, {meta.get('coll_np', '?')} processes, "
                 "mean time per call averaged over ranks (lower is better)", fontsize=10)
    _finish(fig, meta, _runs_text(coll), path)


def plot_am(lat, tput, meta, path):
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.6))
    configs = sorted({k[0] for k in lat})
    for cfg in configs:
        for kind in sorted({k[1] for k in lat if k[0] == cfg}):
            pts = series(lat, (cfg, kind))
            if kind == "short":
                # Short carries no payload: one point, drawn as a flat line over the range.
                pts = pts[:1]
            _line(ax1, pts, f"{cfg}: {kind}", "-o" if "galapagos" in cfg else "--s")
    ax1.axhline(SHOAL_SHORT_RTT_US, color="k", ls=":", lw=1.2)
    ax1.text(8, SHOAL_SHORT_RTT_US * 1.08, f"Shoal, published (not measured): Short RTT {SHOAL_SHORT_RTT_US} us",
             fontsize=7.5)
    ax1.set_xscale("symlog", base=2, linthresh=8)
    ax1.set_yscale("log")
    ax1.set_xlabel("payload (bytes; Short: 0)")
    ax1.set_ylabel("round trip, message + automatic reply (us)")
    ax1.set_title("Active-message round trip (median per run)", fontsize=10)
    ax1.grid(True, which="both", alpha=0.3)
    ax1.legend(fontsize=7)
    for cfg in configs:
        for kind in sorted({k[1] for k in tput if k[0] == cfg}):
            if kind == "short":
                continue
            _line(ax2, series(tput, (cfg, kind)), f"{cfg}: {kind}", "-o" if "galapagos" in cfg else "--s")
    ax2.plot([4096], [SHOAL_LONG_4K_GBPS], "k*", ms=11,
             label=f"Shoal, published (not measured): Long 4096 B {SHOAL_LONG_4K_GBPS} Gb/s")
    _size_axis(ax2)
    ax2.set_yscale("log")
    ax2.set_xlabel("payload (bytes)")
    ax2.set_ylabel("payload throughput (Gb/s), higher is better")
    ax2.set_title("Active-message throughput (bursts of N, then wait for replies)", fontsize=10)
    ax2.legend(fontsize=7)
    fig.suptitle("PGAS active messages (weft-am, Shoal's method) vs Shoal's published same-node figures", fontsize=10)
    _finish(fig, meta, _runs_text(lat), path)
