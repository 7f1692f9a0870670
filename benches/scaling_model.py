#!/usr/bin/env python3
"""Performance model of weft's parallel window loop, calibrated from measured runs.

    benches/scaling_model.py CALIB.json [CALIB.json ...] [options]

CALIB.json: summaries of one scenario (`weft run S --json > f.json`, or `--out DIR`'s
summary.json) at 1 thread per rank, 1 rank and 2 or more ranks. The model (docs/ARCHITECTURE.md,
"Performance model") puts one window of the loop on the critical path of the slowest rank:

    wall(R) = setup + s_ev * E_max(R)                       simulation (busiest rank's events)
                    + W * (c_win + alpha + beta*log2 R)     per-window fixed cost + allreduce
                    + W * gamma * n(R)                      one message per neighbour rank
                    + (eps + delta) * bytes(R)              encode/decode + transfer per byte
                    + iota * remote(R)                      inserting received events

E_max(R) = imbalance(R) * E / R; W (windows) does not depend on R (the lookahead is the smallest
link latency); remote(R), the events a rank receives from others, is lambda * cut_links(R) * W / R
(lambda: events crossing a cut link per cut link and window, measured over the calibration
plans' partition cuts; uniform activity over links);
bytes(R) = remote(R) * bytes per remote event (measured). cut_links(R), n(R) and imbalance(R)
come from `weft partition --parts R --ranks R` on the target scenario (--target-scenario), or
default to R - 1 neighbours and remote events growing as 1 - 1/R (stated in the output).

Fits (least squares, non-negative): s_ev and c_win from every rank's process time
(process = s_ev*events + c_win*W); alpha, beta from the slowest rank's allreduce time per
window (the slowest rank waits for nobody) against log2 R, one-rank runs included (log2 1 = 0;
with a single rank count alpha = 0 and beta = t/log2 R: recursive doubling); eps from encode time
per byte sent; gamma, delta from exchange time per window = gamma*n + delta*bytes/W; iota, and
the per-window rest, from the rest of the sync time. Runs with more ranks than --cores
(oversubscribed) are not fitted unless --fit-oversubscribed: they validate only.

Writes a CSV (--out, default stdout): ranks, predicted wall, speedup, efficiency and the
breakdown; prints the fitted parameters, the validation against every calibration file and the
assumptions to stderr. --fit-json FILE writes the fitted parameters as JSON (tests read it).
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile


class UserError(Exception):
    pass


def load(path):
    try:
        with open(path) as f:
            d = json.load(f)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file")
    except (OSError, ValueError) as e:
        raise UserError(f"{path}: not a weft summary JSON ({e})")
    try:
        run, res = d["run"], d["results"]
        per_rank = run["per_rank"]
        r = {
            "path": path,
            "ranks": int(run["ranks"]),
            "threads": int(run["threads"]),
            "windows": int(run["windows"]),
            "events": int(res["events"]),
            "wall_s": float(run["wall_s"]),
            "setup_s": float(run["setup_wall_s"]),
            "cut_links": int(run["cut_links"]),
            "cross_partition_events": int(run["cross_partition_events"]),
            "partitions": int(run["partitions"]),
            "ranks_data": [
                {
                    "events": int(p["events"]),
                    "process": float(p["process_wall_s"]),
                    "reduce": float(p["reduce_wall_s"]),
                    "encode": float(p["encode_wall_s"]),
                    "exchange": float(p["exchange_wall_s"]),
                    "sync": float(p["sync_wall_s"]),
                    "remote_events": int(p["remote_events"]),
                    "remote_bytes": int(p["remote_bytes"]),
                }
                for p in per_rank
            ],
        }
    except (KeyError, TypeError, ValueError) as e:
        raise UserError(f"{path}: missing or bad field {e} (needs run.per_rank[].events: weft after issue 13)")
    if r["threads"] != 1:
        raise UserError(f"{path}: run.threads = {r['threads']}: the model is calibrated on 1 thread per rank")
    if len(r["ranks_data"]) != r["ranks"] or r["windows"] <= 0:
        raise UserError(f"{path}: run.per_rank has {len(r['ranks_data'])} entries for {r['ranks']} ranks")
    return r


def lsq2(rows):
    """Least squares y = a*x1 + b*x2 with a, b >= 0; rows of (x1, x2, y)."""
    s11 = sum(x1 * x1 for x1, _, _ in rows)
    s22 = sum(x2 * x2 for _, x2, _ in rows)
    s12 = sum(x1 * x2 for x1, x2, _ in rows)
    s1y = sum(x1 * y for x1, _, y in rows)
    s2y = sum(x2 * y for _, x2, y in rows)
    det = s11 * s22 - s12 * s12
    if det > 1e-12 * max(s11 * s22, 1e-300):
        a = (s1y * s22 - s2y * s12) / det
        b = (s2y * s11 - s1y * s12) / det
        if a >= 0 and b >= 0:
            return a, b
    # Singular (x1 proportional to x2: one run's ranks all alike): x1 alone, the leading
    # term. A negative coefficient: the better of the two one-parameter fits.
    if det <= 1e-12 * max(s11 * s22, 1e-300) and s11 > 0:
        return max(s1y / s11, 0.0), 0.0
    fits = []
    if s11 > 0:
        a = max(s1y / s11, 0.0)
        fits.append((sum((y - a * x1) ** 2 for x1, _, y in rows), a, 0.0))
    if s22 > 0:
        b = max(s2y / s22, 0.0)
        fits.append((sum((y - b * x2) ** 2 for _, x2, y in rows), 0.0, b))
    if not fits:
        return 0.0, 0.0
    _, a, b = min(fits)
    return a, b


def slowest(run):
    return max(run["ranks_data"], key=lambda p: p["process"])


def neighbours_default(r):
    # Small rank counts on a fat tree: core switches are spread round-robin, so every rank
    # borders every other.
    return r - 1


def fit(runs, cores, fit_oversubscribed, process_fit="all"):
    use = [r for r in runs if fit_oversubscribed or r["ranks"] <= cores]
    if not use:
        raise UserError(f"no calibration run with at most --cores {cores} ranks")
    p = {}
    # Simulation: every rank's process time (or the 1-rank runs' only: on a shared machine
    # the ranks of a multi-rank run may not get a core each).
    src = [r for r in use if r["ranks"] == 1] if process_fit == "one-rank" else use
    if not src:
        raise UserError("--process-fit one-rank: no 1-rank calibration run")
    rows = [(d["events"], r["windows"], d["process"]) for r in src for d in r["ranks_data"]]
    p["s_ev"], p["c_win"] = lsq2(rows)
    # Allreduce on the slowest rank, per window, against log2 R.
    pts = [(math.log2(r["ranks"]), slowest(r)["reduce"] / r["windows"]) for r in use]
    if len({x for x, _ in pts}) >= 2:
        beta, alpha = lsq2([(x, 1.0, y) for x, y in pts])
    else:
        x = pts[0][0]
        alpha, beta = (0.0, sum(y for _, y in pts) / len(pts) / x) if x > 0 else (pts[0][1], 0.0)
    p["alpha"], p["beta"] = alpha, beta
    multi = [r for r in use if r["ranks"] > 1]
    sent = sum(slowest(r)["remote_bytes"] for r in multi)
    p["eps"] = sum(slowest(r)["encode"] for r in multi) / sent if sent else 0.0
    rows = [(neighbours_default(r["ranks"]), slowest(r)["remote_bytes"] / r["windows"],
             slowest(r)["exchange"] / r["windows"]) for r in multi]
    p["gamma"], p["delta"] = lsq2(rows) if rows else (0.0, 0.0)
    rows = [(slowest(r)["remote_events"], r["windows"],
             max(slowest(r)["sync"] - slowest(r)["reduce"] - slowest(r)["encode"] - slowest(r)["exchange"], 0.0))
            for r in use]
    p["iota"], p["c_sync"] = lsq2(rows)
    rem = sum(d["remote_events"] for r in multi for d in r["ranks_data"])
    p["bytes_per_remote_event"] = (
        sum(d["remote_bytes"] for r in multi for d in r["ranks_data"]) / rem if rem else 0.0)
    # Events crossing a cut link, per cut link and window: the plan's partitions (by default
    # one per 256 hosts, whatever the rank count) and their cut links, 1-rank runs included.
    lam = [r["cross_partition_events"] / (r["cut_links"] * r["windows"])
           for r in use if r["cut_links"] > 0]
    p["lambda"] = sum(lam) / len(lam) if lam else 0.0
    p["fitted_on"] = [r["path"] for r in use]
    return p


def predict(p, R, E, W, setup, e_max, remote_total, n):
    """Wall time and its breakdown for R ranks (remote_total: events received by all ranks)."""
    rem = remote_total / R if R > 1 else 0.0
    by = rem * p["bytes_per_remote_event"]
    parts = {
        "process_s": p["s_ev"] * e_max + p["c_win"] * W,
        "reduce_s": W * (p["alpha"] + p["beta"] * math.log2(R)),
        "encode_s": p["eps"] * by,
        "exchange_s": (W * p["gamma"] * n + p["delta"] * by) if R > 1 else 0.0,
        "other_sync_s": p["iota"] * rem + p["c_sync"] * W,
    }
    return setup + sum(parts.values()), parts


def validate(p, runs, cores):
    lines = []
    for r in runs:
        R = r["ranks"]
        e_max = max(d["events"] for d in r["ranks_data"])
        remote = sum(d["remote_events"] for d in r["ranks_data"])
        wall, _ = predict(p, R, r["events"], r["windows"], r["setup_s"], e_max, remote,
                          neighbours_default(R))
        err = (wall - r["wall_s"]) / r["wall_s"] * 100
        tag = " (oversubscribed: more ranks than cores)" if R > cores else ""
        lines.append(f"  {r['path']}: {R} rank(s): measured {r['wall_s']:.3f} s, model {wall:.3f} s, {err:+.1f} %{tag}")
    return lines


def partition_stats(weft, scenario, sets, R, weights):
    """cut links, max neighbour ranks, event (or port) imbalance of `weft partition` at R ranks."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [weft, "partition", scenario, "--parts", str(R), "--ranks", str(R), "-o", os.path.join(tmp, "p.plan")]
        for s in sets:
            cmd += ["--set", s]
        if weights:
            cmd += ["--weights", weights]
        out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise UserError(f"{' '.join(cmd)}: {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else 'failed'}")
    text = out.stdout
    cut = int(re.search(r"(\d+) cut links", text).group(1))
    m = re.search(r"neighbour ranks per rank: max (\d+)", text)
    n = int(m.group(1)) if m else R - 1
    m = re.search(r"expected event imbalance ([0-9.]+)", text)
    imb = float(m.group(1)) if m else float(re.search(r"port imbalance ([0-9.]+)", text).group(1))
    return cut, n, imb


def scenario_ports(weft, scenario, sets):
    cmd = [weft, "validate", scenario] + [x for s in sets for x in ("--set", s)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise UserError(f"{' '.join(cmd)}: failed")
    m = re.search(r"^ports\s+(\d+)", out.stdout, re.M)
    if not m:
        raise UserError(f"{' '.join(cmd)}: no 'ports' line in its output")
    return int(m.group(1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("calib", nargs="+", help="summary JSON files of one scenario (1 thread per rank)")
    ap.add_argument("--cores", type=int, default=os.cpu_count(), help="cores of the calibration machine")
    ap.add_argument("--fit-oversubscribed", action="store_true", help="fit runs with more ranks than cores too")
    ap.add_argument("--ranks", default="1,2,4,8,16,64,256,1024", help="rank counts to project")
    ap.add_argument("--target-scenario", help="project this scenario (default: the calibration's)")
    ap.add_argument("--set", dest="sets", action="append", default=[], help="--set for the target scenario")
    ap.add_argument("--weights", help="node_events.csv of the target scenario (balanced plans' imbalance)")
    ap.add_argument("--weft", default=os.environ.get("WEFT_BIN", "target/release/weft"))
    ap.add_argument("--target-events", type=float, help="events of the target (default: measured)")
    ap.add_argument("--target-windows", type=float, help="windows of the target (default: measured)")
    ap.add_argument("--target-setup-s", type=float,
                    help="set-up wall time of the target (default: the calibration's smallest); every rank builds the model")
    ap.add_argument("--calib-ports", type=int,
                    help="ports of the multi-rank calibration runs' fabric (`weft validate`): scales lambda by "
                         "the target's events per port and window over theirs (needs --target-scenario)")
    ap.add_argument("--alpha-us", type=float, help="override the allreduce's alpha (µs)")
    ap.add_argument("--beta-us", type=float, help="override the allreduce's beta (µs per log2 R)")
    ap.add_argument("--gamma-us", type=float, help="override the per-neighbour message latency (µs)")
    ap.add_argument("--delta-ns", type=float, help="override the exchange's cost per byte (ns)")
    ap.add_argument("--eps-ns", type=float, help="override the encode/decode cost per byte (ns)")
    ap.add_argument("--process-fit", choices=["all", "one-rank"], default="all",
                    help="fit the simulation cost on every rank of every run (default) or on 1-rank runs only")
    ap.add_argument("--out", help="CSV output (default stdout)")
    ap.add_argument("--fit-json", help="write the fitted parameters as JSON")
    a = ap.parse_args()
    try:
        ranks = [int(x) for x in a.ranks.split(",")]
        if not ranks or min(ranks) < 1:
            raise ValueError
    except ValueError:
        raise UserError(f"--ranks {a.ranks}: a comma-separated list of positive integers")
    runs = [load(f) for f in a.calib]
    p = fit(runs, a.cores, a.fit_oversubscribed, a.process_fit)
    overridden = []
    for name, key, unit in (("alpha_us", "alpha", 1e-6), ("beta_us", "beta", 1e-6), ("gamma_us", "gamma", 1e-6),
                            ("delta_ns", "delta", 1e-9), ("eps_ns", "eps", 1e-9)):
        v = getattr(a, name)
        if v is not None:
            flag = "--" + name.replace("_", "-")
            if v < 0:
                raise UserError(f"{flag} {v}: must be >= 0")
            p[key] = v * unit
            overridden.append(f"{flag} {v:g}")
    if a.fit_json:
        with open(a.fit_json, "w") as f:
            json.dump(p, f, indent=1)
    err = sys.stderr
    print("fitted (per window W, per event, per byte; overrides applied):", file=err)
    print(f"  simulation {p['s_ev'] * 1e9:.1f} ns/event + {p['c_win'] * 1e6:.2f} µs/window", file=err)
    print(f"  allreduce  {p['alpha'] * 1e6:.2f} + {p['beta'] * 1e6:.2f} * log2(R) µs/window", file=err)
    print(f"  exchange   {p['gamma'] * 1e6:.2f} µs per neighbour rank and window + {p['delta'] * 1e9:.3f} ns/byte; "
          f"encode/decode {p['eps'] * 1e9:.3f} ns/byte", file=err)
    print(f"  insertion  {p['iota'] * 1e9:.1f} ns per received event + {p['c_sync'] * 1e6:.2f} µs/window", file=err)
    print(f"  traffic    {p['lambda']:.3f} events per cut link and window, "
          f"{p['bytes_per_remote_event']:.1f} B each", file=err)
    print("validation (the measured run's own events per rank and remote events):", file=err)
    for line in validate(p, runs, a.cores):
        print(line, file=err)

    base = max(runs, key=lambda r: r["events"] / r["ranks"])  # a 1-rank run if given
    E = a.target_events or float(base["events"])
    W = a.target_windows or float(base["windows"])
    setup = a.target_setup_s if a.target_setup_s is not None else min(r["setup_s"] for r in runs)
    multi = [r for r in runs if r["ranks"] > 1]
    lam = p["lambda"]
    assumptions = [f"events {E:.4g}, windows {W:.4g} (independent of R), setup {setup:.2f} s, 1 thread per rank"]
    if a.calib_ports and a.target_scenario:
        ports_t = scenario_ports(a.weft, a.target_scenario, a.sets)
        lam_runs = [r for r in runs if r["cut_links"] > 0]
        if not lam_runs:
            raise UserError("--calib-ports: no calibration run with cut links (lambda is measured on those)")
        # Events per port and window where lambda was measured (all of --calib-ports' fabric)
        # against the target's.
        cal = sum(r["events"] / (a.calib_ports * r["windows"]) for r in lam_runs) / len(lam_runs)
        scale = (E / (ports_t * W)) / cal
        lam *= scale
        assumptions.append(f"remote events per cut link and window scaled by events per port and window: x{scale:.3f}")
    rows = []
    for R in ranks:
        if a.target_scenario:
            cut, n, imb = partition_stats(a.weft, a.target_scenario, a.sets, R, a.weights) if R > 1 else (0, 0, 1.0)
        else:
            ref = min(multi, key=lambda r: r["ranks"]) if multi else None
            cut, n = "", neighbours_default(R)
            imb = (max(d["events"] for d in ref["ranks_data"]) * ref["ranks"] / ref["events"]) if ref else 1.0
            if R == 1 or not ref:
                imb = 1.0
        if a.target_scenario:
            remote = lam * cut * W
        elif ref and R > 1:
            # Uniform traffic: the share of hops that cross ranks grows as 1 - 1/R.
            ref_remote = sum(d["remote_events"] for d in ref["ranks_data"])
            remote = ref_remote * (1 - 1 / R) / (1 - 1 / ref["ranks"]) * W / ref["windows"]
        else:
            remote = 0.0
        wall, parts = predict(p, R, E, W, setup, imb * E / R, remote, n)
        rows.append((R, wall, parts, cut, n, imb))
    if not a.target_scenario:
        assumptions.append("no --target-scenario: remote events grow as 1 - 1/R from the fewest-rank calibration "
                           "run's (uniform traffic), R - 1 neighbour ranks, that run's rank imbalance")
    else:
        assumptions.append(f"cut links, neighbour ranks and imbalance from `weft partition --parts R --ranks R`"
                           f"{' --weights ' + a.weights if a.weights else ' (port imbalance: no --weights)'}")
    if overridden:
        assumptions.append("overridden (not fitted): " + ", ".join(overridden))
    assumptions.append("uniform activity over cut links; the slowest rank's sync costs on the critical path; "
                       "costs per byte and per message as calibrated (shared memory unless overridden)")
    one = rows[0][1] if rows[0][0] == 1 else predict(p, 1, E, W, setup, E, 0, 0)[0]
    keys = ["process_s", "reduce_s", "encode_s", "exchange_s", "other_sync_s"]
    lines = ["ranks,wall_s,speedup,efficiency," + ",".join(keys) + ",cut_links,neighbour_ranks,imbalance"]
    for R, wall, parts, cut, n, imb in rows:
        sp = one / wall
        lines.append(f"{R},{wall:.4f},{sp:.2f},{sp / R:.3f}," + ",".join(f"{parts[k]:.4f}" for k in keys)
                     + f",{cut},{n},{imb:.3f}")
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    print("assumptions:", file=err)
    for s in assumptions:
        print("  " + s, file=err)


if __name__ == "__main__":
    try:
        main()
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(1)
