"""Scaling curves: load time and peak memory against the number of
references (10^4 to 10^7), zarrs_kerchunk against fsspec, each point a whole
process timed by `peer_bench.py repeat` (median of n runs), written as a PNG
plot and the JSON of every point.

    python benches/tools/scaling.py [--root /tmp/refbench] [--sizes 4,5,6,7] [-n 3]
        [--refbench target/release/examples/refbench] [--peer-bench ../shared/bench/peer_bench.py]
        [--out benches/scaling]

Workloads: `load-json N` (v0 JSON, open + one key), `open-parquet N` (open +
100 random lookups) for both; `load-v1 N` (one `gen` entry) for ours only,
as fsspec takes 179 s at 10^5 and 30 minutes at 10^6. `peer_bench.py` accepts
N up to 10^6 only, so the fsspec curves stop there. The corpus comes from
`make_synthetic.py --sizes 4,5,6,7`. Needs matplotlib (benches/tools/requirements.txt).
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def point(peer_bench, root, n_runs, command):
    out = subprocess.run([sys.executable, peer_bench, "--root", root, "repeat", "-n", str(n_runs), "--warmup", "1",
                          "--", *command], capture_output=True, text=True, check=True).stdout
    summary = json.loads(out)
    if summary["rc"] != [0]:
        sys.exit(f"{' '.join(command)} failed: {summary}")
    return {"wall_s": summary["wall_s"][1], "peak_mib": summary["peak_mib"][1]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default="/tmp/refbench")
    ap.add_argument("--sizes", default="4,5,6,7")
    ap.add_argument("-n", type=int, default=3)
    ap.add_argument("--refbench", default=os.path.join(REPO, "target/release/examples/refbench"))
    ap.add_argument("--peer-bench", default=os.path.join(REPO, "../shared/bench/peer_bench.py"))
    ap.add_argument("--out", default=os.path.join(REPO, "benches/scaling"))
    a = ap.parse_args()
    sizes = [int(e) for e in a.sizes.split(",")]
    series = {
        ("load-json", "zarrs_kerchunk"): lambda n: [a.refbench, "--root", a.root, "load-json", n],
        ("load-json", "fsspec"): lambda n: ["load-json", n],
        ("open-parquet", "zarrs_kerchunk"): lambda n: [a.refbench, "--root", a.root, "open-parquet", n],
        ("open-parquet", "fsspec"): lambda n: ["open-parquet", n],
        ("load-v1", "zarrs_kerchunk"): lambda n: [a.refbench, "--root", a.root, "load-v1", n],
    }
    results = []
    for (workload, engine), command in series.items():
        for e in sizes:
            if engine == "fsspec" and e > 6:
                continue  # peer_bench.py takes N up to 1e6
            p = point(a.peer_bench, a.root, a.n, command(f"1e{e}"))
            p.update(workload=workload, engine=engine, n=10 ** e, runs=a.n)
            print(json.dumps(p), file=sys.stderr)
            results.append(p)
    with open(a.out + ".json", "w") as f:
        json.dump(results, f, indent=1)
    plot(results, a.out + ".png")
    print(f"wrote {a.out}.png and {a.out}.json")


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    styles = {"zarrs_kerchunk": "-", "fsspec": "--"}
    colours = {"load-json": "tab:blue", "open-parquet": "tab:orange", "load-v1": "tab:green"}
    for ax, field, label in ((axes[0], "wall_s", "whole process, s (median)"),
                             (axes[1], "peak_mib", "peak RSS, MiB (median)")):
        for (workload, engine) in sorted({(r["workload"], r["engine"]) for r in results}):
            pts = sorted((r["n"], r[field]) for r in results if r["workload"] == workload and r["engine"] == engine)
            ax.plot([n for n, _ in pts], [v for _, v in pts], styles[engine], marker="o", color=colours[workload],
                    label=f"{workload}, {engine}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("references")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle("Loading kerchunk references: zarrs_kerchunk (solid) against fsspec (dashed)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
