"""How long the `susbench` command takes to start, as a ratio to an empty Python, in one run.

    python benchmarks/cli_startup.py [--runs 20] [--warmup 3] [--out benchmarks/results/cli-startup-DATE.md]

Every root command's `--help` is timed (the goal: each within 0.5 s, as `susbench --help`).

Warm runs (the OS file cache and __pycache__ filled by warm-up runs), side by side with hyperfine so
the machine's load is the same for every command; the ratio to `python -c pass` is what to compare
across machines. Also lists the heavy modules each command imports (`-X importtime`).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

BIN = Path(sys.executable).parent
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from susbench.cli.main import COMMANDS as ROOT_COMMANDS  # noqa: E402 - after the checkout is on the path

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "susbench --help": [str(BIN / "susbench"), "--help"],
    "susbench version": [str(BIN / "susbench"), "version"],
    **{f"susbench {name} --help": [str(BIN / "susbench"), name, "--help"] for name in ROOT_COMMANDS},
}
HEAVY = ("mitmproxy", "scipy", "playwright", "duckdb", "numpy", "matplotlib", "docker", "statsmodels")


def heavy_imports(command: list[str]) -> list[str]:
    """The heavy top-level packages a command imports."""
    code = "import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')"
    if command[0] == sys.executable:
        return []
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code, *command],
        capture_output=True,
        text=True,
        check=False,
    )
    names = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in result.stderr.splitlines()}
    return sorted(names & set(HEAVY))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(f"benchmarks/results/cli-startup-{date.today()}.md"))
    args = parser.parse_args()
    hyperfine = shutil.which("hyperfine")
    if hyperfine is None:
        raise SystemExit("needs hyperfine (apt-get install -y hyperfine)")
    with tempfile.TemporaryDirectory() as folder:
        exported = Path(folder) / "runs.json"
        subprocess.run(
            [
                hyperfine,
                "--warmup",
                str(args.warmup),
                "--runs",
                str(args.runs),
                "--shell=none",
                "--export-json",
                str(exported),
                *(" ".join(command) for command in COMMANDS.values()),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        results = json.loads(exported.read_text())["results"]
    base = results[0]["median"]
    rows = [
        f"| `{name}` | {result['median'] * 1000:.0f} | {result['mean'] * 1000:.0f} ± "
        f"{result['stddev'] * 1000:.0f} | {result['median'] / base:.1f} | "
        f"{', '.join(heavy_imports(command)) or '-'} |"
        for (name, command), result in zip(COMMANDS.items(), results, strict=True)
    ]
    table = "\n".join(
        [
            "| command | median ms | mean ± sd ms | × `python -c pass` | heavy packages imported |",
            "|---|---:|---:|---:|---|",
            *rows,
        ]
    )
    print(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(table + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
