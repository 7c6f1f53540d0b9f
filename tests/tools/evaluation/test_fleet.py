"""`predrel eval --scheduler` (evaluation.fleet): the sweep on Dask workers gives the tables, rows and
summary of `--jobs 1`, and a worker lost mid-run costs no row and duplicates none."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections import Counter

import pytest

from predrel_ros.tools.cli.main import main
from predrel_ros.tools.evaluation.config import EvaluationConfig
from predrel_ros.tools.evaluation.fleet import check_scheduler
from predrel_ros.tools.evaluation.sweep import run_sweep

#: summary.json fields that record how the run was parallelised (and where it wrote), not what it found
PARALLELISM = {"evaluation": ("jobs", "scheduler")}
#: ... those that measure seconds (they differ between any two runs), and the paths under --out
MEASURED = {"selection": ("seconds", "timings"), "action_models": ("seconds", "timings")}
PATHS = {"action_models": ("files",)}


def comparable(summary: dict) -> dict:
    """summary.json without the parallelism, the wall/CPU seconds and the --out paths (docs/fleet-evaluation.md)."""
    summary = json.loads(json.dumps(summary))
    del summary["timing"]
    for section, fields in [*PARALLELISM.items(), *MEASURED.items(), *PATHS.items()]:
        for field in fields:
            summary["settings"][section].pop(field, None)
    for episode in summary["episodes"]:
        del episode["timings"]
    return summary


def quiet(_message: str) -> None:
    pass


def small_arguments(data, predicates) -> list[str]:
    """Oracle perception, 2 episodes (train), 2 kinds x 2 severities, recognizers fitted: seconds."""
    return ["eval", "--data", str(data), "--perception", "oracle", "--predicate-config", predicates,
            "--split", "train", "--selection-split", "train", "--kinds", "occlusion", "detection_noise",
            "--severities", "2,4", "--no-progress"]


@pytest.mark.parametrize("text", ["local:1", "local:16", "tcp://10.0.0.5:8786", "scheduler:8786",
                                  "tls://scheduler.cluster.local:8786"])
def test_scheduler_forms_are_accepted(text):
    assert check_scheduler(text) == text


@pytest.mark.parametrize("text", ["local:0", "local:", "local:two", "http://host:8786", "scheduler", "tcp://",
                                  "tcp://host:port", "inproc://10.0.0.5/1", ""])
def test_bad_scheduler_is_a_value_error(text):
    with pytest.raises(ValueError, match="scheduler"):
        check_scheduler(text)


def test_scheduler_and_jobs_are_exclusive():
    with pytest.raises(ValueError, match="give one of them"):
        EvaluationConfig(jobs=2, scheduler="local:2")


def test_an_unreachable_scheduler_is_a_user_error(controlled_dataset, predicate_file, tmp_path, capsys):
    import dask
    import distributed  # noqa: F401  (its config defaults before the override, which would drop them on exit)

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        code = main(small_arguments(controlled_dataset, predicate_file) + ["--out", str(tmp_path / "out"),
                                                                         "--scheduler", "tcp://127.0.0.1:9"])
    assert code == 1
    assert "cannot reach the Dask scheduler tcp://127.0.0.1:9" in capsys.readouterr().err


def test_help_does_not_import_dask():
    code = ("import sys; from predrel_ros.tools.cli.main import build_parser; build_parser(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_local_cluster_gives_the_results_of_one_job(controlled_dataset, predicate_file, tmp_path):
    arguments = small_arguments(controlled_dataset, predicate_file)
    assert main(arguments + ["--out", str(tmp_path / "jobs1"), "--jobs", "1"]) == 0
    assert main(arguments + ["--out", str(tmp_path / "dask2"), "--scheduler", "local:2"]) == 0
    one, dask = tmp_path / "jobs1", tmp_path / "dask2"
    sequences = sorted(p.relative_to(one) for p in (one / "sequences").iterdir())
    for name in ["tables.md", "rows.csv", "summary.csv", "action.csv", "dis.csv", *sequences]:
        assert (dask / name).read_bytes() == (one / name).read_bytes(), name
    summary_one, summary_dask = (json.loads((out / "summary.json").read_text()) for out in (one, dask))
    assert comparable(summary_dask) == comparable(summary_one)
    assert summary_dask["settings"]["evaluation"]["scheduler"] == "local:2"
    assert (summary_dask["timing"]["scheduler"], summary_dask["timing"]["dask_workers"]) == ("local:2", 2)
    assert summary_one["timing"]["scheduler"] is None
    assert sorted(p.relative_to(dask) for p in (dask / "sequences").iterdir()) == sequences   # and no temporary file


def _row_keys(path) -> Counter:
    with path.open() as handle:
        return Counter(tuple(row.values()) for row in csv.DictReader(handle))


@pytest.mark.slow
@pytest.mark.ci
def test_a_worker_killed_mid_run_loses_and_duplicates_no_row(controlled_dataset, predicate_file, tmp_path):
    from dask_faults import DieAfterEpisode
    from distributed import Client, LocalCluster

    config = dict(perception="oracle", predicate_config=predicate_file, test_split="train",
                  kinds=("occlusion", "detection_noise"), severities=(2, 4), action_model="none")
    run_sweep(EvaluationConfig(**config), controlled_dataset, tmp_path / "jobs1", progress=False, log=quiet)
    marker = tmp_path / "died"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        episodes = [json.loads((tmp_path / "jobs1" / "summary.json").read_text())["episodes"][0]["name"]]
        client.register_plugin(DieAfterEpisode(episodes[0], str(marker)))
        run_sweep(EvaluationConfig(**config, scheduler=cluster.scheduler_address), controlled_dataset,
                  tmp_path / "dask", progress=False, log=quiet)
    assert marker.is_file()   # a worker did die after its unit had written its sequences
    rows, expected = _row_keys(tmp_path / "dask" / "rows.csv"), _row_keys(tmp_path / "jobs1" / "rows.csv")
    assert rows == expected and set(rows.values()) == {1}
    assert (tmp_path / "dask" / "tables.md").read_text() == (tmp_path / "jobs1" / "tables.md").read_text()
    saved = [json.loads((tmp_path / out / "summary.json").read_text()) for out in ("dask", "jobs1")]
    assert comparable(saved[0]) == comparable(saved[1])
