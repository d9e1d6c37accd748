"""What a gold model costs inside dbt as the project grows: the demo's ecommerce metric and rule layer copied k times.

    .venv/bin/python benchmarks/bench_growth.py --target 1000 --copies 1 8 16 32

For each k, a throw-away copy of the demo project gets k - 1 more copies of the ecommerce metric models (their
yml, their SQL) and business rules (their macros, yml and rule documents), every metric and rule id suffixed
with `_c<i>` (composites read their own copy's components, rules modify their own copy's metrics). Then
`dbt build`, then `dptool generate --target N`. A company with k times the metrics should pay k times the
gold models, each at the same price: ms_per_gold_model (seconds inside dbt's runner over the gold models dbt
compiled, every round) should not grow with k. On a machine others share, the CPU seconds of this process inside
dbt (cpu_ms_per_gold_model) say more than the wall seconds.

Writes benchmarks/results/growth-target<N>.json: for each k the metrics, tasks, gold models, generate's
seconds, the seconds inside dbt, ms_per_gold_model, and the load average before and after (others' work
slows a run); and `ms_per_gold_model_ratio`, the largest k's over the smallest's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dptool import __version__  # noqa: E402
from dptool.generate.pipeline import generate  # noqa: E402
from dptool.project.dbt import DbtProject, dbt_version  # noqa: E402
from tests.conftest import copy_demo_project  # noqa: E402

METRICS = Path("models/ecommerce/metrics")
RULES = Path("macros/ecommerce")
DOCS = Path("models/ecommerce/docs")


def copy_layer(project_dir: Path, copy: int) -> None:
    """One more copy of the ecommerce metric and rule layer, its ids suffixed `_c<copy>`."""
    suffix = f"_c{copy}"
    metrics = [m["name"] for m in yaml.safe_load((project_dir / METRICS / "_ecommerce__metrics.yml").read_text())
               ["models"]]
    rules = [r["name"] for r in yaml.safe_load((project_dir / RULES / "_ecommerce__rules.yml").read_text())["macros"]]
    # longest first, whole words: `gmv` is renamed, `gmv_per_active_seller` is not renamed twice
    names = re.compile(r"\b(" + "|".join(sorted(map(re.escape, metrics + rules), key=len, reverse=True)) + r")\b")
    labels = re.compile(r"^(\s*(?:label|title): )(.*)$", re.MULTILINE)

    def renamed(text: str) -> str:
        text = names.sub(lambda m: m.group(1) + suffix, text)
        return labels.sub(lambda m: m.group(1) + json.dumps(f"{yaml.safe_load(m.group(2))} (copy {copy})"), text)

    for folder, pattern in ((METRICS, "*"), (RULES, "*"), (DOCS, "rule__*.md")):
        out = project_dir / folder / f"copy{suffix}"  # inside the folder: its dbt_project.yml config holds
        out.mkdir(parents=True, exist_ok=True)
        for src in sorted(p for p in (project_dir / folder).glob(pattern) if p.is_file()):
            stem = names.sub(lambda m: m.group(1) + suffix, src.stem)
            (out / f"{stem}{src.suffix}").write_text(renamed(src.read_text(encoding="utf-8")), encoding="utf-8")


def run_once(copies: int, target: int, workdir: Path) -> dict:
    project_dir = copy_demo_project(workdir / "project")
    for copy in range(2, copies + 1):
        copy_layer(project_dir, copy)
    project = DbtProject(project_dir)
    project.run("deps")
    start = time.perf_counter()
    project.run("build", "--exclude", "resource_type:test")  # the layer's models; its checks are not the point
    dbt_build = time.perf_counter() - start
    metrics = sum(1 for n in project.load_manifest()["nodes"].values()
                  if n["resource_type"] == "model" and n["config"].get("meta", {}).get("dptool", {}).get("metric"))
    project.dbt_seconds = 0.0
    load_before = os.getloadavg()
    start = time.perf_counter()
    result = generate(project_dir, workdir / "bundle", target_tasks=target, echo=lambda _: None, progress=False)
    generate_seconds = time.perf_counter() - start
    return {
        "copies": copies,
        "metrics": metrics,
        "validated_tasks": len(result.tasks),
        "gold_models": result.gold_models,
        "generate_seconds": round(generate_seconds, 2),
        "inside_dbt_seconds": result.dbt_seconds,
        "ms_per_gold_model": round(result.dbt_seconds / result.gold_models * 1000, 2),
        "inside_dbt_cpu_seconds": result.dbt_cpu_seconds,
        "cpu_ms_per_gold_model": round(result.dbt_cpu_seconds / result.gold_models * 1000, 2),
        "stage_seconds": result.timings,
        "dbt_build_seconds": round(dbt_build, 2),
        "load_average": {"before": [round(x, 2) for x in load_before],
                         "after": [round(x, 2) for x in os.getloadavg()]},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=int, default=1000, help="dptool generate --target")
    parser.add_argument("--copies", type=int, nargs="+", default=[1, 8, 16, 32],
                        help="how many copies of the ecommerce layer (1 = the demo as it is)")
    args = parser.parse_args()

    runs = []
    for copies in args.copies:
        with tempfile.TemporaryDirectory() as tmp:
            runs.append(run_once(copies, args.target, Path(tmp)))
        print(f"k={copies:<3} metrics {runs[-1]['metrics']:>5}  tasks {runs[-1]['validated_tasks']:>5}  "
              f"gold models {runs[-1]['gold_models']:>5}  generate {runs[-1]['generate_seconds']:>7.1f} s  "
              f"inside dbt {runs[-1]['inside_dbt_seconds']:>7.1f} s  {runs[-1]['ms_per_gold_model']:>6.2f} ms/model "
              f"(cpu {runs[-1]['cpu_ms_per_gold_model']:.2f})  "
              f"load {runs[-1]['load_average']['before'][0]}->{runs[-1]['load_average']['after'][0]}", flush=True)
    smallest, largest = min(runs, key=lambda r: r["copies"]), max(runs, key=lambda r: r["copies"])
    report = {
        "benchmark": "growth",
        "target": args.target,
        "ms_per_gold_model_ratio": round(largest["ms_per_gold_model"] / smallest["ms_per_gold_model"], 2),
        "cpu_ms_per_gold_model_ratio": round(largest["cpu_ms_per_gold_model"] / smallest["cpu_ms_per_gold_model"], 2),
        "runs": runs,
        "cores": os.cpu_count(),
        "versions": {"dptool": __version__, "dbt-core": dbt_version(), "python": platform.python_version()},
        "machine": {"processor": platform.machine(), "system": platform.system()},
    }
    out = REPO / "benchmarks" / "results" / f"growth-target{args.target}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"ms_per_gold_model k={largest['copies']} / k={smallest['copies']}: {report['ms_per_gold_model_ratio']} "
          f"(cpu {report['cpu_ms_per_gold_model_ratio']}) -> {out.relative_to(REPO)}")


if __name__ == "__main__":
    main()
