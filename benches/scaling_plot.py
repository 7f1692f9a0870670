#!/usr/bin/env python3
"""Speedup and parallel efficiency against cores (ranks x threads), strong and weak scaling,
as an SVG written by hand (python3 stdlib only).

    benches/scaling_plot.py scaling.csv scaling.svg [model.csv]

scaling.csv: benches/scaling.sh's CSV (mode, ranks, threads, ..., speedup, efficiency).
model.csv: optional benches/scaling_model.py output (ranks, ..., speedup, efficiency), drawn
dashed as "model" with one thread per rank. Cores on a log2 axis; speedup on a log2 axis
from 1/4; efficiency linear from 0 to 1.25.
"""
import csv
import math
import sys

W, H, M = 460, 320, 55  # one panel's size and margin, px
COLORS = {"strong": "#1f77b4", "weak": "#d62728", "model": "#2ca02c"}


def series(path):
    out = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            mode = row.get("mode", "model")
            ranks, threads = int(row["ranks"]), int(row.get("threads", 1))
            point = (ranks * threads, float(row["speedup"]), float(row["efficiency"]))
            if mode == "model":
                out.setdefault(mode, []).append(point)
                continue
            # A series over threads (1 rank) and one over ranks (1 thread); the 1-core point
            # starts both. Mixed points (ranks and threads > 1) form a third.
            if ranks == 1:
                out.setdefault(f"{mode}, threads", []).append(point)
            if threads == 1:
                out.setdefault(f"{mode}, ranks", []).append(point)
            if ranks > 1 and threads > 1:
                out.setdefault(f"{mode}, ranks x threads", []).append(point)
    for v in out.values():
        v.sort()
    return out


def panel(x0, title, ylabel, data, ymax, logy, max_cores):
    s = [f'<g transform="translate({x0},0)">',
         f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="14">{title}</text>']
    lx = math.log2(max(max_cores, 2))

    def px(c):
        return M + (W - 2 * M) * math.log2(c) / lx

    def py(v):
        if logy:  # from 1/4 (a slowdown shows) to ymax
            v = (math.log2(max(v, 1e-3)) + 2) / (math.log2(ymax) + 2)
        else:
            v = v / ymax
        return H - M - (H - 2 * M) * min(max(v, 0), 1)

    s.append(f'<line x1="{M}" y1="{H - M}" x2="{W - M}" y2="{H - M}" stroke="black"/>')
    s.append(f'<line x1="{M}" y1="{M}" x2="{M}" y2="{H - M}" stroke="black"/>')
    c = 1
    while c <= max_cores:
        s.append(f'<text x="{px(c):.1f}" y="{H - M + 16}" text-anchor="middle" font-size="11">{c}</text>')
        c *= 2 if max_cores <= 64 else 4
    ticks = [2 ** i for i in range(-2, int(math.log2(ymax)) + 1)] if logy else [0, 0.25, 0.5, 0.75, 1.0]
    for t in ticks:
        s.append(f'<text x="{M - 6}" y="{py(t) + 4:.1f}" text-anchor="end" font-size="11">{t:g}</text>')
        s.append(f'<line x1="{M}" y1="{py(t):.1f}" x2="{W - M}" y2="{py(t):.1f}" stroke="#ddd"/>')
    s.append(f'<text x="{W / 2}" y="{H - 12}" text-anchor="middle" font-size="12">cores (ranks × threads)</text>')
    s.append(f'<text x="14" y="{H / 2}" font-size="12" transform="rotate(-90 14 {H / 2})" '
             f'text-anchor="middle">{ylabel}</text>')
    if logy:  # ideal speedup
        s.append(f'<line x1="{px(1):.1f}" y1="{py(1):.1f}" x2="{px(max_cores):.1f}" '
                 f'y2="{py(min(max_cores, ymax)):.1f}" stroke="#999" stroke-dasharray="2,3"/>')
    for i, (name, pts) in enumerate(sorted(data.items())):
        color = COLORS.get(name.split(",")[0], "#555")
        dash = ' stroke-dasharray="6,4"' if name == "model" or "ranks" in name else ""
        path = " ".join(f"{px(c):.1f},{py(v):.1f}" for c, v in pts)
        s.append(f'<polyline points="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        for c, v in pts:
            s.append(f'<circle cx="{px(c):.1f}" cy="{py(v):.1f}" r="3" fill="{color}"/>')
        s.append(f'<text x="{M + 8}" y="{M + 14 + 14 * i}" font-size="11" fill="{color}">{name}</text>')
    s.append("</g>")
    return s


def main():
    if len(sys.argv) not in (3, 4):
        print("usage: scaling_plot.py scaling.csv out.svg [model.csv]", file=sys.stderr)
        sys.exit(1)
    try:
        data = series(sys.argv[1])
        if len(sys.argv) == 4:
            data.update(series(sys.argv[3]))
    except (OSError, KeyError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
    max_cores = max(c for v in data.values() for c, _, _ in v)
    ymax = 2 ** math.ceil(math.log2(max(2, max_cores)))
    sp = {k: [(c, s) for c, s, _ in v] for k, v in data.items()}
    ef = {k: [(c, e) for c, _, e in v] for k, v in data.items()}
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * W}" height="{H}" font-family="sans-serif">',
           '<rect width="100%" height="100%" fill="white"/>']
    out += panel(0, "speedup", "speedup", sp, ymax, True, max_cores)
    out += panel(W, "parallel efficiency", "efficiency", ef, 1.25, False, max_cores)
    out.append("</svg>")
    with open(sys.argv[2], "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
