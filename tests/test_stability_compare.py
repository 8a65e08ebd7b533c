"""``benchmarks/stability.py --compare OLD.csv NEW.csv``: the normalized cost of each entry of two ``bench run`` cost
files, reproduced within the tolerance or not, on real cost files written here (one taken back with ``git show``)."""

from __future__ import annotations

import subprocess

from cli_run import benchmark_script

from bertjudge.evaluation import bench_results

INTEL, AMD = "Intel(R) Xeon(R) Processor, 2 threads", "AMD EPYC, 2 threads"


def cost_row(name: str, p50=None, gflops=None, measured_at="2026-12-06T10:00:00Z", busy="", hardware=AMD) -> dict:
    """A cost row as ``bench run`` writes it: timed (latency and the machine's GEMM speed) or FLOPs only."""
    timed = p50 is not None
    return {
        "name": name,
        "judge_kind": "encoder",
        "params": 22713601,
        "tokens": 71,
        "flops": 1554000000,
        "latency_p50_ms": p50 if timed else "",
        "latency_p95_ms": p50 * 1.1 if timed else "",
        "machine_gflops": gflops if timed else "",
        "rounds": 3 if timed else 0,
        "device": "cpu",
        "dtype": "fp32",
        "hardware": hardware,
        "torch": "2.13.0",
        "measured_at": measured_at,
        "other_load": 0.4 if busy else 0.004,
        "busy": busy,
        "notes": "",
    }


def write(path, rows):
    return bench_results.write_table(path, rows, bench_results.COST_FIELDS)


def test_compare_passes_when_every_normalized_cost_reproduces_and_lists_what_it_cannot_compare(tmp_path, capsys):
    stability = benchmark_script("stability")
    old = write(
        tmp_path / "old.csv",
        [
            cost_row("minilm-l6.quickstart", 13.05, 252.3, "2026-12-05T12:50:00Z", hardware=INTEL),  # 3.292
            cost_row("qwen3-14b.direct"),  # FLOPs only: no latency
            cost_row("mpnet-base.arch", 80.5, 255.4, "2026-12-05T12:51:39Z"),  # kept by the second run
            cost_row("gone.v1", 1.0, 200.0),  # in the old file only
        ],
    )
    new = write(
        tmp_path / "new.csv",
        [
            cost_row("minilm-l6.quickstart", 18.34, 178.8, busy="yes"),  # 3.279: the machine slower, the cost not
            cost_row("qwen3-14b.direct"),
            cost_row("mpnet-base.arch", 80.5, 255.4, "2026-12-05T12:51:39Z"),
            cost_row("contains.v1", 0.1576, 192.4),  # in the new file only
        ],
    )
    assert stability.main(["--compare", str(old), str(new)]) == 0
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "`minilm-l6.quickstart` |" in line)
    cells = [cell.strip() for cell in line.strip("|").split("|")]
    assert cells[1:4] == ["3.292 / 3.279", "0.996", "1.004"]  # both costs, new / old, max / min
    assert cells[-2:] == ["no / yes", "ok"]  # busy flags of each row, within 15%
    assert "timed on other hardware" in out
    assert "not compared, only in old: gone.v1" in out
    assert "not compared, only in new: contains.v1" in out
    assert "not compared, no normalized cost in one: qwen3-14b.direct" in out
    assert "not compared, not measured again (the same measured_at" in out and "mpnet-base.arch" in out
    assert "every normalized cost reproduces within 15% (1 entries)" in out
    assert "rows timed busy (a run with --allow-busy): minilm-l6.quickstart" in out


def test_compare_fails_on_a_cost_outside_the_tolerance_read_back_with_git_show(tmp_path, capsys):
    stability = benchmark_script("stability")
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    results = repo / "cost-cpu-fp32-torch2.13.0.csv"
    write(
        results, [cost_row("regex.v1", 0.9989, 251.6, "2026-12-05T12:05:13Z"), cost_row("minilm-l6.arch", 13.1, 263.7)]
    )
    subprocess.run([*git, "add", results.name], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "first bench run"], check=True)
    # the second bench run rewrites the file; the first comes back from git, as the engineer takes it back
    write(
        results,
        [
            cost_row("regex.v1", 0.9064, 192.9, "2026-12-06T10:17:08Z"),
            cost_row("minilm-l6.arch", 11.9, 263.7, "2026-12-06T10:20:00Z"),
        ],
    )
    old = tmp_path / "old.csv"
    with open(old, "wb") as handle:
        subprocess.run([*git, "show", f"HEAD:{results.name}"], check=True, stdout=handle)
    assert stability.main(["--compare", str(old), str(results)]) == 1
    out = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| `")}
    assert rows["`regex.v1`"].rstrip().endswith("| NO |") and "| 1.438 |" in rows["`regex.v1`"]  # 0.2513 / 0.1748
    assert rows["`minilm-l6.arch`"].rstrip().endswith("| ok |")  # 13.1 / 11.9 = 1.101
    assert "1 of 2 entries outside 15%: regex.v1" in out
    # a wider tolerance takes both; a file that is not there is an error, exit 1
    assert stability.main(["--compare", str(old), str(results), "--tolerance", "0.5"]) == 0
    assert stability.main(["--compare", str(tmp_path / "missing.csv"), str(results)]) == 1
    assert "missing.csv: no such file" in capsys.readouterr().err


def test_compare_with_nothing_in_common_is_a_failure(tmp_path, capsys):
    stability = benchmark_script("stability")
    old = write(tmp_path / "old.csv", [cost_row("a.v1", 1.0, 200.0)])
    new = write(tmp_path / "new.csv", [cost_row("b.v1", 1.0, 200.0)])
    assert stability.main(["--compare", str(old), str(new)]) == 1  # nothing compared is not "every entry reproduces"
    out = capsys.readouterr().out
    assert "only in old: a.v1" in out and "only in new: b.v1" in out and "nothing reproduced" in out
