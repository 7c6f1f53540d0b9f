"""The whole evaluation: selection on clean validation data, the recognizers, the degradation sweep
over the test episodes (in parallel), and every output.

    from predrel_ros.tools.evaluation import EvaluationConfig, run_sweep
    summary = run_sweep(EvaluationConfig(perception="oracle"), "data/controlled", "runs/eval")

Order (paper 4.8: nothing is tuned on degraded data):
1. predicate thresholds (`predicates.selection.select_thresholds`, from the shipped
   `config/predicates.yaml`, with depth where the episodes have it) and confidence weights
   (`select_confidence_weights`) on the clean `selection_split`, through the evaluated front-end,
   unless a predicate config file is given; then fixed and written as a complete config file
   (`predicates.selected.yaml`: every section, usable in place of `config/predicates.yaml`);
2. the recognizers (`evaluation.action`) on the clean `train_split` predicates (or a model file);
3. every condition on every test episode (`episode_run.evaluate_episode`), episodes in parallel;
4. aggregation (`tables`), calibration, plots, Markdown, HTML, JSON and CSV.

Timing: each worker times its phases; perception is the detector (network + decoding) and tracking
with entity assembly, everything else (loading, degrading, predicates, association, metrics, the
recognizer, writing, and the main process's aggregation and report) is the evaluator's overhead.
"""
from __future__ import annotations

import contextlib
import csv
import dataclasses
import json
import math
import multiprocessing
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from predrel_ros import __version__
from predrel_ros.core.config_io import read_data, write_data
from predrel_ros.core.errors import UserError
from predrel_ros.core.frame import PRIMITIVE_LABELS
from predrel_ros.core.package_files import config_file
from predrel_ros.degradations import NONE
from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.config import PredicateConfig
from predrel_ros.predicates.selection import shippable_config
from predrel_ros.reliability.calibration import calibration_summary
from predrel_ros.sources.bag import CameraTopics
from predrel_ros.tools.evaluation import (
    action,
    agreement,
    entity_partners,
    episode_run,
    fleet,
    plots,
    report,
    scores,
    tables,
    trust_measurement,
)
from predrel_ros.tools.evaluation.config import COMMITTED, FIT, NO_ACTION, EvaluationConfig
from predrel_ros.tools.evaluation.data import EpisodeSource, resolve_data
from predrel_ros.tools.evaluation.front_ends import ORACLE_NOT_APPLICABLE, PERCEPTION_PHASES, make_front_end
from predrel_ros.tools.evaluation.sequences import EpisodeSequences
from predrel_ros.tools.evaluation.trust_plot import trust_plot

Log = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _map(spec: episode_run.SweepSpec, function, items: Sequence, jobs: int, description: str, progress: bool,
         cluster: fleet.Fleet | None = None) -> list:
    """function(item) for every item, in order; on the Dask `cluster` when given, else in `jobs` spawned
    worker processes when jobs > 1."""
    if cluster is not None and items:   # a remote worker has its own working directory
        items = [dataclasses.replace(item, path=os.path.abspath(item.path)) for item in items]
        return cluster.map(spec, function, items, description, progress)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(items), desc=description, unit="episode", file=sys.stderr)
    results = []
    try:
        if jobs <= 1 or len(items) <= 1:
            episode_run.init_worker(spec)
            for item in items:
                results.append(function(item))
                if bar is not None:
                    bar.update()
        else:
            context = multiprocessing.get_context("spawn")
            with context.Pool(min(jobs, len(items)), initializer=episode_run.init_worker, initargs=(spec,)) as pool:
                for result in pool.imap(function, items):
                    results.append(result)
                    if bar is not None:
                        bar.update()
    finally:
        if bar is not None:
            bar.close()
    return results


def _worker_threads(config: EvaluationConfig) -> int:
    """CPU threads of each worker: the machine's cores shared by --jobs or local:N workers; 1 on a
    cluster (one thread per worker process, docs/fleet-evaluation.md)."""
    if config.scheduler is None:
        return episode_run.worker_threads(config.jobs)
    local = fleet.local_workers(config.scheduler)
    return episode_run.worker_threads(local) if local else 1


@contextlib.contextmanager
def _cluster(config: EvaluationConfig, log: Log) -> Iterator[fleet.Fleet | None]:
    if config.scheduler is None:
        yield None
        return
    with fleet.connect(config.scheduler) as cluster:
        log(f"Dask scheduler {config.scheduler}: {cluster.workers()} workers")
        yield cluster


def _sum_timings(timings: Sequence[dict]) -> dict[str, float]:
    total: dict[str, float] = defaultdict(float)
    for item in timings:
        for phase, seconds in item.items():
            total[phase] += seconds
    return dict(total)


def shipped_predicate_config() -> Path:
    """The package's config/predicates.yaml: the base of the selection and its other sections."""
    return config_file("predicates.yaml")


def _load_predicate_config(path: str) -> PredicateConfig:
    try:
        return PredicateConfig.load(path, section="predicates")
    except ValueError as error:
        raise UserError(str(error)) from None


def select_predicate_config(config: EvaluationConfig, sources: Sequence[EpisodeSource], cache_dir: str | None,
                            progress: bool, log: Log,
                            cluster: fleet.Fleet | None = None) -> tuple[PredicateConfig, dict]:
    """Thresholds and confidence weights selected on the clean `sources` (see the module docstring)."""
    from predrel_ros.predicates import selection

    started = time.perf_counter()
    base = _load_predicate_config(str(shipped_predicate_config()))
    spec = episode_run.SweepSpec(config, base.to_dict(), cache_dir, None, threads=_worker_threads(config))
    timings = []
    if not config.oracle and config.parallel:
        timings += _map(spec, episode_run.warm_detections, list(sources), config.jobs,
                        "selection: clean detections", progress, cluster)
    single = episode_run.SweepSpec(config, spec.predicate_config, cache_dir, None, threads=0)
    prepared = _map(single, episode_run.selection_sequence, list(sources), 1, "selection: clean entities", progress)
    sequences = [sequence for sequence, _ in prepared]
    timings += [timing for _, timing in prepared]
    log(f"selecting thresholds on {len(sequences)} clean {config.selection_split} episodes")
    chosen = selection.select_thresholds(sequences, base=base, progress=progress)
    weighted = selection.select_confidence_weights(chosen.config, sequences)
    record = {"split": config.selection_split, "episodes": [s.name for s in sources],
              "agreement_before": chosen.agreement_before, "agreement_after": chosen.agreement_after,
              "passes": chosen.passes, "scores": {path: {str(v): s for v, s in values.items()}
                                                  for path, values in chosen.scores.items()},
              "thresholds": {path: weighted.get(path) for path in selection.applicable_grid(selection.DEFAULT_GRID,
                                                                                             weighted)},
              "seconds": time.perf_counter() - started, "timings": _sum_timings(timings)}
    return weighted, record


def build_action_models(config: EvaluationConfig, data, predicate_config: PredicateConfig, cache_dir: str | None,
                        progress: bool, log: Log,
                        cluster: fleet.Fleet | None = None) -> tuple[action.ActionModels | None, dict]:
    if config.action_model == NO_ACTION:
        return None, {"models": "none"}
    if config.action_model == COMMITTED:
        return action.load_models(None), {"models": "committed"}
    if config.action_model != FIT:
        return action.load_models(config.action_model), {"models": config.action_model}
    train, val = data.split(config.train_split), data.split(config.selection_split)
    if not train or not val:
        raise UserError(f"fitting the recognizers needs episodes in the {config.train_split!r} and "
                        f"{config.selection_split!r} splits; give --action-model committed, a model file, or none")
    started = time.perf_counter()
    spec = episode_run.SweepSpec(config, predicate_config.to_dict(), cache_dir, None,
                                 threads=_worker_threads(config))
    produced = _map(spec, episode_run.clean_stream, list(train) + list(val), config.jobs,
                    "recognizer: clean train/val predicates", progress, cluster)
    streams = [stream for stream, _ in produced]
    if all(label is None for stream in streams for label in stream.labels):
        log("the train/val episodes have no primitive labels: no recognizer, no downstream rows")
        return None, {"models": "none (no primitive labels)"}
    log(f"fitting the recognizers on {len(train)} train episodes (selection on {len(val)} val episodes)")
    models = action.fit_models(streams[:len(train)], streams[len(train):], PRIMITIVE_LABELS, progress=progress)
    return models, {"models": "fit", "seconds": time.perf_counter() - started,
                    "timings": _sum_timings([timing for _, timing in produced]),
                    "selected": models.full.training.get("evaluation_fit", {}).get("selected")}


def _calibration(sequence_files: Sequence[Path], bins: int) -> dict:
    clean, degraded = ([], [], []), ([], [], [])
    for path in sequence_files:
        sequences = EpisodeSequences.load(path)
        clean_index = [i for i, c in enumerate(sequences.conditions) if c.kind == NONE]
        other = [i for i, c in enumerate(sequences.conditions) if c.kind != NONE]
        for target, indices in ((clean, clean_index), (degraded, other)):
            for part, values in zip(target, scores.calibration_samples(sequences, indices)):
                part.append(values)
    out = {}
    for name, (confidence, correct, group) in (("clean", clean), ("degraded", degraded)):
        confidence = np.concatenate(confidence) if confidence else np.zeros(0)
        correct = np.concatenate(correct) if correct else np.zeros(0, bool)
        group = np.concatenate(group) if group else np.zeros(0, np.int64)
        out[name] = calibration_summary(confidence, correct, bins)
        if name == "degraded":
            for index, group_name in enumerate(vocabulary.GROUPS):
                selected = group == index
                out[f"degraded {group_name}"] = calibration_summary(confidence[selected], correct[selected], bins)
    return out


def _write_csv(path: Path, records: Sequence[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fields: list[str] = []
    for record in records:
        fields += [key for key in record if key not in fields]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=fields)
        writer.writeheader()
        for record in records:
            writer.writerow({key: _plain(value) for key, value in record.items()})
    return path


def _plain(value):
    if isinstance(value, float) and math.isnan(value):
        return ""
    return value


def json_safe(value):
    """value with NaN as None and numpy numbers as Python numbers, for JSON."""
    if isinstance(value, dict):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    if isinstance(value, (np.floating, float)):
        return None if math.isnan(float(value)) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def run_sweep(config: EvaluationConfig, data_path: str | Path, out_dir: str | Path, cache_dir: str | Path | None = None,
              progress: bool = True, log: Log = _stderr, command: str = "",
              camera: CameraTopics = CameraTopics()) -> dict:
    """Run the evaluation and write everything under `out_dir`; returns the summary dict (`camera`:
    the camera topics of bags)."""
    wall_started = time.perf_counter()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cache = os.path.abspath(cache_dir if cache_dir is not None else out / "cache") if not config.oracle else None
    data = resolve_data(data_path, config.test_split, camera)
    test = data.split(config.test_split)[:config.max_episodes]
    perception_description = {"front_end": "oracle (ground-truth entities)"}
    if not config.oracle:   # a missing model or a bad perception config fails now, not after the selection
        front = make_front_end(config.perception, config.perception_config, None)
        perception_description = front.describe()
        front.close()
    _check_trust_files(config)
    log(f"evaluating {len(test)} {config.test_split} episodes of {data.description} with "
        f"{config.perception} perception, reference {config.reference}")

    with _cluster(config, log) as cluster:
        if config.predicate_config:
            predicate_config, selection_record = _load_predicate_config(config.predicate_config), \
                {"from_file": config.predicate_config}
        else:
            sources = data.split(config.selection_split)
            if not sources:
                raise UserError(f"no {config.selection_split!r} episodes to select thresholds on ({data.description}); "
                                f"give --predicate-config FILE (e.g. config/predicates.yaml) or --selection-split")
            predicate_config, selection_record = select_predicate_config(config, sources, cache, progress, log,
                                                                          cluster)
        base_file = config.predicate_config or shipped_predicate_config()
        write_data(out / "predicates.selected.yaml", shippable_config(predicate_config, read_data(base_file)))
        write_data(out / "selection.json", json_safe(selection_record))

        models, models_record = build_action_models(config, data, predicate_config, cache, progress, log, cluster)
        if models is not None:
            models_record["files"] = models.save(out / "action-models")
            models_record["origin"] = models.origin

        spec = episode_run.SweepSpec(config, predicate_config.to_dict(), cache, os.path.abspath(out / "sequences"),
                                     models, threads=_worker_threads(config))
        sweep_started = time.perf_counter()
        results = _map(spec, episode_run.evaluate_episode, list(test), config.jobs, "sweep", progress, cluster)
        sweep_wall = time.perf_counter() - sweep_started
        workers = cluster.workers() if cluster is not None else None
    _check_sequences(out, results)

    aggregation_started = time.perf_counter()
    summary = write_outputs(config, data.description, results, out, models, selection_record, models_record, command,
                            perception_description)
    aggregation_seconds = time.perf_counter() - aggregation_started

    worker = _sum_timings([r.timings for r in results])
    perception = sum(worker.get(phase, 0.0) for phase in PERCEPTION_PHASES)
    overhead = worker.get("episode_total", 0.0) - perception + aggregation_seconds
    timing = {
        "test_episodes": len(results), "test_frames": sum(r.frames for r in results), "jobs": config.jobs,
        "scheduler": config.scheduler, "dask_workers": workers,
        "phases_seconds": worker, "perception_seconds": perception,
        "aggregation_and_outputs_seconds": aggregation_seconds,
        "evaluator_overhead_seconds": overhead,
        "overhead_share_of_perception": overhead / perception if perception > 0 else None,
        "predicate_extraction_seconds": worker.get("predicates", 0.0),
        "overhead_without_predicate_extraction_seconds": overhead - worker.get("predicates", 0.0),
        "sweep_wall_seconds": sweep_wall, "total_wall_seconds": time.perf_counter() - wall_started,
        "selection_seconds": selection_record.get("seconds"), "recognizer_fit_seconds": models_record.get("seconds"),
        "detection_cache": "warm or cold: see phases_seconds.detector (0 when every detection came from the cache)",
    }
    (out / "timing.json").write_text(json.dumps(json_safe(timing), indent=2) + "\n")
    _finish(out, summary, timing)
    if perception > 0:
        log(f"perception {perception:.1f} s, evaluator overhead {overhead:.1f} s "
            f"({100 * overhead / perception:.1f} % of perception)")
    log(agreement.summary_line(json.loads((out / "agreement.json").read_text())))
    log(f"wrote {out / 'report.html'}, {out / 'tables.md'}, {out / 'summary.json'}")
    return summary


def _check_sequences(out: Path, results: Sequence[episode_run.EpisodeResult]) -> None:
    """Every episode's sequences file is here (Dask workers write them into --out: a shared folder)."""
    missing = [r.episode for r in results if not (out / "sequences" / f"{r.episode}.npz").is_file()]
    if missing:
        raise UserError(f"{out / 'sequences'} lacks the sequences of {len(missing)} episodes ({', '.join(missing[:3])}"
                        f"{', ...' if len(missing) > 3 else ''}): the workers wrote them where this machine does not "
                        f"see them; give an --out (and --cache) on a filesystem they share at the same path")


def _finish(out: Path, summary: dict, timing: dict) -> None:
    summary["timing"] = timing
    (out / "summary.json").write_text(json.dumps(json_safe(summary), indent=2) + "\n")
    report.write_report(out / "report.html", summary["title"], (out / "tables.md").read_text(),
                        {caption: out / "plots" / name for caption, name in summary["plots"].items()},
                        json_safe(timing), json_safe(summary["settings"]), summary["notes"])


def rebuild_outputs(out_dir: str | Path, log: Log = _stderr) -> dict:
    """Tables, findings, calibration, plots, CSV, JSON and the report of a finished run, recomputed
    from its saved sequences and recognizer outcomes: after a change to how the tables are built,
    without running perception again. The timing stays the original run's."""
    out = Path(out_dir)
    try:
        previous = json.loads((out / "summary.json").read_text())
        selection_record = json.loads((out / "selection.json").read_text())
    except (OSError, ValueError) as error:
        raise UserError(f"{out}: not the output folder of a finished `predrel eval` run ({error})") from None
    settings = previous["settings"]
    config = EvaluationConfig(**{key: tuple(value) if key in ("kinds", "severities") else value
                                 for key, value in settings["evaluation"].items()})
    results = []
    for episode in previous["episodes"]:
        sequences = EpisodeSequences.load(out / "sequences" / f"{episode['name']}.npz")
        predictions_file = out / "sequences" / f"{episode['name']}.action.npz"
        y_true, predictions = episode_run.load_predictions(predictions_file) if predictions_file.is_file() \
            else (None, {})
        results.append(episode_run.EpisodeResult(
            episode["name"], episode["scenario_group"], episode["frames"],
            scores.episode_rows(sequences, config.tpc_tolerance), predictions, y_true, episode["timings"],
            list(previous["kinds_not_applicable"]), episode["conditions"]))
    models = action.load_models(out / "action-models" / "full.json") \
        if (out / "action-models" / "full.json").is_file() else None
    command = json.loads((out / "config.json").read_text()).get("command", "")
    summary = write_outputs(config, settings["data"], results, out, models, selection_record,
                            settings["action_models"], command, settings.get("perception"))
    _finish(out, summary, previous["timing"])
    log(f"rebuilt {out / 'report.html'}, {out / 'tables.md'}, {out / 'summary.json'}")
    return summary


def _check_trust_files(config: EvaluationConfig) -> None:
    """A --trust-profile or --trust-model that does not load, or was made over another window, fails now."""
    from predrel_ros.reliability.trust import CleanProfile
    from predrel_ros.reliability.trust_estimator import TrustModel

    for option, path, load, made in (("--trust-profile", config.trust_profile, CleanProfile.load, "measured"),
                                     ("--trust-model", config.trust_model, TrustModel.load, "fitted")):
        if not path:
            continue
        try:
            loaded = load(path)
        except (OSError, ValueError, KeyError) as error:
            raise UserError(f"{option} {path}: {error}") from None
        if loaded.window != config.trust_window:
            raise UserError(f"{option} {path} was {made} over {loaded.window}-frame windows and --trust-window is "
                            f"{config.trust_window}; give --trust-window {loaded.window}")


def _trust(out: Path, results: Sequence[episode_run.EpisodeResult], window: int) -> dict | None:
    """trust.json from the saved sequences and self-trust series (None for a run saved without them)."""
    files = [(out / "sequences" / f"{r.episode}.npz", out / "sequences" / f"{r.episode}.trust.npz") for r in results]
    if not files or not all(trust_file.is_file() for _, trust_file in files):
        return None
    episodes = [(EpisodeSequences.load(sequences), *trust_measurement.load_series(trust_file))
                for sequences, trust_file in files]
    document = trust_measurement.trust_document(episodes, window)
    (out / "trust.json").write_text(json.dumps(json_safe(document), indent=2) + "\n")
    return document


def write_outputs(config: EvaluationConfig, description: str, results: Sequence[episode_run.EpisodeResult], out: Path,
                  models: action.ActionModels | None, selection_record: dict, models_record: dict,
                  command: str, perception: dict | None = None) -> dict:
    """Tables, findings, calibration, plots, CSV and JSON of a finished sweep (the report is
    written by the caller once the timing is known)."""
    kinds_not_applicable = sorted({kind for r in results for kind in r.not_applicable})
    kinds = [kind for kind in config.kinds if kind not in kinds_not_applicable]
    severities = list(config.severities)
    rows = [row for r in results for row in r.rows]
    _write_csv(out / "rows.csv", rows)
    cells = tables.Cells(rows)
    actions = None
    if models is not None and any(r.y_true is not None for r in results):
        actions = tables.ActionScores([(r.y_true, r.predictions) for r in results if r.y_true is not None],
                                      len(models.full.class_names))
    moderate = config.moderate_severity if config.moderate_severity in severities else max(severities)
    severe = config.severe_severity if config.severe_severity in severities else max(severities)
    label = f"{description} ({config.perception} perception)"
    numbers = tables.build_tables(cells, actions, kinds, severities, moderate, severe, label)
    sequence_files = [out / "sequences" / f"{r.episode}.npz" for r in results]
    calibration = _calibration(sequence_files, config.calibration_bins)
    agreement_record = agreement.write_agreement(
        out / "agreement.json", sequence_files,
        [stats["reference_entities"] for r in results for stats in r.condition_stats if "reference_entities" in stats])
    found = tables.findings(numbers, kinds, severities, moderate, calibration["degraded"])
    title = f"Predicate reliability: {description}, {config.perception} perception, reference {config.reference}"
    markdown = tables.markdown(numbers, found, kinds, severities, moderate, severe, kinds_not_applicable, title)
    if agreement_record.get("entities"):
        markdown += "\n\n" + entity_partners.entity_table(agreement_record["entities"])
    trust = _trust(out, results, config.trust_window)
    if trust is not None:
        markdown += "\n\n" + trust_measurement.trust_table(trust)
    (out / "tables.md").write_text(markdown + "\n")
    records = tables.summary_records(cells)
    _write_csv(out / "summary.csv", records)
    if actions is not None:
        _write_csv(out / "action.csv", [{"variant": v, "kind": k, "severity": s, **values}
                                        for (v, k, s), values in sorted(actions.scores.items())])
        _write_csv(out / "dis.csv", [{"predicate": name, "condition": condition, **values}
                                     for name, by_condition in numbers["dis"].items()
                                     for condition, values in by_condition.items()])

    plot_files = {"Confidence vs reliability, with ECE": "calibration.png"}
    if kinds:   # the degradation plots (none for a clean-only run)
        plot_files = {"PRS by degradation and severity (Table 8)": "prs_heatmap.png",
                      "PDS by predicate and degradation (Table 10)": "pds_heatmap.png",
                      "TPC by group over severity (Table 11)": "tpc_curves.png", **plot_files}
        plots.prs_heatmap(numbers["table8"], kinds, severities, numbers["clean_prs"],
                          out / "plots" / "prs_heatmap.png")
        plots.pds_heatmap(numbers["table10"], kinds, out / "plots" / "pds_heatmap.png")
        clean_tpc = {g: cells.group(g, NONE, 0, "tpc") for g in vocabulary.GROUPS}
        plots.tpc_curves(numbers["table11"], clean_tpc, severities, out / "plots" / "tpc_curves.png")
    if trust is not None:
        trust_plot(trust, out / "plots" / "trust.png")
        plot_files["Trust: true vs expected agreement and flagged share per condition"] = "trust.png"
    plots.calibration_diagram({name: calibration[name] for name in ("clean", "degraded")},
                              out / "plots" / "calibration.png")
    if actions is not None and kinds:
        plots.dis_bars(numbers["dis"], numbers["dis_mean"], severities, out / "plots" / "dis_bars.png")
        plot_files["DIS per predicate"] = "dis_bars.png"

    notes = [f"Command: {command}" if command else "",
             f"{len(results)} {config.test_split} episodes, {sum(r.frames for r in results)} frames; kinds "
             f"{', '.join(kinds) or 'none (the clean condition alone)'}; severities {severities}."]
    if kinds_not_applicable:
        notes.append(f"Not applicable to the oracle front-end (perfect perception is unaffected): "
                     f"{', '.join(kinds_not_applicable)}." if config.oracle else
                     f"Not applicable: {', '.join(kinds_not_applicable)}.")
    settings = {"evaluation": config.to_dict(), "data": description, "predrel_ros": __version__,
                "perception": perception or {},
                "selection": {k: v for k, v in selection_record.items() if k != "scores"},
                "action_models": models_record,
                "oracle_not_applicable": list(ORACLE_NOT_APPLICABLE) if config.oracle else []}
    (out / "config.json").write_text(json.dumps(json_safe({**settings, "command": command}), indent=2) + "\n")
    return {"title": title, "settings": settings, "notes": [n for n in notes if n], "tables": numbers,
            "findings": found, "calibration": {name: summary.to_dict() for name, summary in calibration.items()},
            "action": None if actions is None else {f"{v}|{k}|{s}": values
                                                    for (v, k, s), values in actions.scores.items()},
            "episodes": [{"name": r.episode, "scenario_group": r.scenario_group, "frames": r.frames,
                          "conditions": r.condition_stats, "timings": r.timings} for r in results],
            "cells": records, "plots": plot_files, "kinds_evaluated": kinds,
            "kinds_not_applicable": kinds_not_applicable}
