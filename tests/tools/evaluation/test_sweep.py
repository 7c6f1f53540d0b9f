"""The whole sweep on the tiny controlled dataset: every table and plot is produced, and every number
of the tables equals the metric functions applied directly to the saved per-frame sequences."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from predrel_ros.action import metrics as action_metrics
from predrel_ros.core.frame import PRIMITIVE_LABELS
from predrel_ros.degradations import CLEAN, NONE
from predrel_ros.predicates import vocabulary
from predrel_ros.reliability import metrics
from predrel_ros.tools.evaluation import action
from predrel_ros.tools.evaluation.config import EvaluationConfig
from predrel_ros.tools.evaluation.episode_run import load_predictions
from predrel_ros.tools.evaluation.scores import VALUE_ROWS
from predrel_ros.tools.evaluation.sequences import EpisodeSequences
from predrel_ros.tools.evaluation.sweep import run_sweep

PNG = b"\x89PNG\r\n\x1a\n"


def quiet(_message: str) -> None:
    pass


@pytest.fixture(scope="module")
def oracle_run(controlled_dataset, predicate_file, tmp_path_factory):
    """Oracle perception, all kinds, severities 1-5, recognizers fitted (on train, chosen on train: the
    tiny set has no val split)."""
    out = tmp_path_factory.mktemp("eval") / "oracle"
    config = EvaluationConfig(perception="oracle", predicate_config=predicate_file, selection_split="train")
    summary = run_sweep(config, controlled_dataset, out, progress=False, log=quiet)
    return out, summary


def _close(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) < 1e-9


def _nanmean(values) -> float:
    values = [v for v in values if not math.isnan(v)]
    return float(np.mean(values)) if values else math.nan


def _direct_cells(out, summary):
    """cell[(group or value row, kind, severity, metric)] recomputed from the saved sequences with
    predrel_ros.reliability.metrics only (the definitions of tables.py / scores.py, step by step)."""
    per_episode: dict[tuple, list[float]] = {}
    for episode in summary["episodes"]:
        sequences = EpisodeSequences.load(out / "sequences" / f"{episode['name']}.npz")
        names = np.array([key[0] for key in sequences.keys])
        known_stream = (sequences.y_ref != metrics.UNK).any(axis=1)
        for index, condition in enumerate(sequences.conditions):
            y, c = sequences.y[index], sequences.c[index]
            group_values: dict[tuple, list[float]] = {}
            for name in vocabulary.PREDICATES:
                rows = np.flatnonzero((names == name) & known_stream)
                if not len(rows):
                    continue
                values = {
                    "prs": metrics.prs(y[rows].ravel(), sequences.y_ref[rows].ravel(), c[rows].ravel()),
                    "tpc": _nanmean([metrics.tpc(y[r], sequences.y_ref[r], 2) for r in rows]),
                    "cws": _nanmean([metrics.cws(c[r], sequences.c_clean[r]) for r in rows]),
                }
                for metric, value in values.items():
                    group_values.setdefault((vocabulary.group_of(name), metric), []).append(value)
            for (group, metric), values in group_values.items():
                per_episode.setdefault((group, condition.kind, condition.severity, metric), []).append(_nanmean(values))
            for row in VALUE_ROWS:
                rows = np.flatnonzero((names == row.predicate) & known_stream)
                selected = np.isin(sequences.y_ref[rows].ravel(), row.codes)
                value = metrics.prs(y[rows].ravel()[selected], sequences.y_ref[rows].ravel()[selected],
                                    c[rows].ravel()[selected]) if selected.any() else math.nan
                per_episode.setdefault((row.label, condition.kind, condition.severity, "prs"), []).append(value)
    return {key: _nanmean(values) for key, values in per_episode.items()}


def test_every_table_plot_and_file_is_produced(oracle_run):
    out, summary = oracle_run
    tables_md = (out / "tables.md").read_text()
    for number in (8, 9, 10, 11, 12, 13, 14, 15):
        assert f"## Table {number}:" in tables_md
    assert "## Findings of the paper" in tables_md
    html = (out / "report.html").read_text()
    assert "## Trust" in tables_md
    for name in ("prs_heatmap", "pds_heatmap", "tpc_curves", "calibration", "dis_bars", "trust"):
        png = (out / "plots" / f"{name}.png").read_bytes()
        assert png.startswith(PNG) and len(png) > 5000
    assert html.count("data:image/png;base64,") == 6 and "Table 15" in html
    for name in ("summary.json", "summary.csv", "rows.csv", "action.csv", "dis.csv", "timing.json", "config.json",
                 "predicates.selected.yaml", "selection.json", "trust.json"):
        assert (out / name).stat().st_size > 0, name
    for name in ("full", "no_confidence", "frame_level"):
        assert (out / "action-models" / f"{name}.json").is_file()
    saved = json.loads((out / "summary.json").read_text())
    assert saved["kinds_not_applicable"] == ["blur", "illumination", "low_resolution"]
    assert len(saved["findings"]) == 8 and all(f["holds"] in (True, False, None) for f in saved["findings"])


def test_prs_tpc_cws_tables_equal_the_metric_functions_on_the_saved_sequences(oracle_run):
    out, summary = oracle_run
    direct = _direct_cells(out, summary)
    numbers = summary["tables"]
    kinds, severities = summary["kinds_evaluated"], [1, 2, 3, 4, 5]
    groups = vocabulary.GROUPS
    checked = 0
    for kind in kinds:
        for s in severities:
            expected = _nanmean([direct.get((g, kind, s, "prs"), math.nan) for g in groups])
            assert _close(numbers["table8"][kind][s], expected)
            checked += 1
    assert _close(numbers["clean_prs"], _nanmean([direct[(g, NONE, 0, "prs")] for g in groups]))
    for group in groups:
        assert _close(numbers["table9"][group][0], direct.get((group, NONE, 0, "prs"), math.nan))
        for s in severities:
            for table, metric in (("table9", "prs"), ("table11", "tpc"), ("table12", "cws")):
                expected = _nanmean([direct.get((group, kind, s, metric), math.nan) for kind in kinds])
                assert _close(numbers[table][group][s], expected), (table, group, s)
                checked += 1
    for row in VALUE_ROWS:
        for kind in kinds:
            scores = {s: direct[(row.label, kind, s, "prs")] for s in severities
                      if not math.isnan(direct[(row.label, kind, s, "prs")])}
            expected = metrics.pds(scores, "endpoint") if len(scores) >= 2 else math.nan
            assert _close(numbers["table10"][row.label][kind], expected), (row.label, kind)
    assert checked > 60
    # and the Markdown shows the same numbers
    tables_md = (out / "tables.md").read_text()
    occlusion = next(line for line in tables_md.splitlines() if line.startswith("| Occlusion |"))
    assert occlusion == "| Occlusion | " + " | ".join(f"{numbers['table8']['occlusion'][s]:.2f}"
                                                      for s in severities) + " |"


def test_downstream_table_and_dis_equal_the_metric_functions_on_the_saved_predictions(oracle_run):
    out, summary = oracle_run
    numbers = summary["tables"]
    kinds = summary["kinds_evaluated"]
    y_true_all, predictions_all = [], []
    for episode in summary["episodes"]:
        y_true, predictions = load_predictions(out / "sequences" / f"{episode['name']}.action.npz")
        y_true_all.append(y_true)
        predictions_all.append(predictions)
    n = len(PRIMITIVE_LABELS)
    y_true = np.concatenate(y_true_all)

    def pooled(variant, kind, severity):
        y_pred = np.concatenate([p[(variant, kind, severity)][0] for p in predictions_all])
        p_true = np.concatenate([p[(variant, kind, severity)][1] for p in predictions_all])
        return y_pred, p_true[y_true >= 0]

    def accuracy(variant, kind, severity):
        return action_metrics.accuracy(y_true, pooled(variant, kind, severity)[0], n)

    clean = accuracy(action.FULL, NONE, 0)
    assert _close(numbers["table13"]["Clean predicates"]["accuracy"], clean)
    assert _close(numbers["table13"]["Clean predicates"]["macro_f1"],
                  action_metrics.macro_f1(y_true, pooled(action.FULL, NONE, 0)[0], n))
    assert _close(numbers["table13"]["Degraded predicates, s=3"]["accuracy"],
                  _nanmean([accuracy(action.FULL, kind, 3) for kind in kinds]))
    assert _close(numbers["table13"]["Degraded predicates, s=3, without confidence weighting"]["accuracy"],
                  _nanmean([accuracy(action.NO_CONFIDENCE, kind, 3) for kind in kinds]))
    assert _close(numbers["table13"]["Mask derived predicates"]["accuracy"],
                  accuracy(action.mask_variant("derived"), NONE, 0))
    for name in ("contact", "grasp", "derived"):
        for kind in kinds:
            expected_accuracy = metrics.dis_accuracy(clean, accuracy(action.mask_variant(name), kind, 5))
            expected_prob = metrics.dis_prob(pooled(action.FULL, NONE, 0)[1],
                                             pooled(action.mask_variant(name), kind, 5)[1])
            assert _close(numbers["dis"][name][f"{kind}:5"]["dis_accuracy"], expected_accuracy)
            assert _close(numbers["dis"][name][f"{kind}:5"]["dis_prob"], expected_prob)
    full = numbers["table15"]["Full framework"]
    assert _close(full[3], numbers["table13"]["Degraded predicates, s=3"]["accuracy"])
    assert _close(full[0], _nanmean([numbers["table8"][kind][3] for kind in kinds]))


def test_results_do_not_depend_on_the_number_of_jobs(controlled_dataset, predicate_file, tmp_path):
    runs = {}
    for jobs in (1, 2):
        config = EvaluationConfig(perception="oracle", predicate_config=predicate_file, test_split="train",
                                  kinds=("occlusion", "detection_noise"), severities=(2, 4), action_model="none",
                                  jobs=jobs)
        run_sweep(config, controlled_dataset, tmp_path / f"jobs{jobs}", progress=False, log=quiet)
        runs[jobs] = (tmp_path / f"jobs{jobs}" / "rows.csv").read_text()
    assert runs[1] == runs[2]
    assert runs[1].count("\n") > 2 * 2 * 2 * 5


def test_perception_sweep_caches_detections_and_reuses_them(controlled_dataset, predicate_file, constant_model,
                                                            tmp_path):
    cache = tmp_path / "cache"
    outcomes = []
    for name in ("cold", "warm"):
        config = EvaluationConfig(perception=str(constant_model), predicate_config=predicate_file,
                                  kinds=("blur", "frame_drop", "detection_noise"), severities=(3, 5),
                                  action_model="none")
        summary = run_sweep(config, controlled_dataset, tmp_path / name, cache_dir=cache, progress=False, log=quiet)
        outcomes.append((summary, (tmp_path / name / "rows.csv").read_text()))
    (cold, cold_rows), (warm, warm_rows) = outcomes
    assert cold["timing"]["phases_seconds"]["detector"] > 0
    assert "detector" not in warm["timing"]["phases_seconds"]           # every detection came from the cache
    assert warm["timing"]["phases_seconds"]["assembly"] > 0              # tracking still runs per condition
    assert cold_rows == warm_rows
    assert len(list(cache.rglob("*.npz"))) == 1 + 2                      # clean + blur 3 and 5
    assert cold["timing"]["perception_seconds"] > 0 and cold["timing"]["overhead_share_of_perception"] > 0
    assert (tmp_path / "cold" / "plots" / "prs_heatmap.png").read_bytes().startswith(PNG)


def test_a_bag_evaluates_like_its_episode_folder(controlled_dataset, predicate_file, tmp_path):
    """The same episode read from its rosbag2 bag and from its folder gives the same values; the
    depth precision differs between the formats (float32 in the bag, 1 mm in the folder), which
    moves the contact margins and so the confidences a little, and can flip one frame of a dynamic
    relation decided on 3D velocities (a 1 mm step a frame is 3 cm/s at 30 Hz)."""
    import csv

    rows = {}
    for name, data in (("bag", controlled_dataset / "bags" / "ep0000_stack"),
                       ("folder", controlled_dataset / "episodes" / "ep0000_stack")):
        config = EvaluationConfig(perception="oracle", predicate_config=predicate_file, kinds=("frame_drop",),
                                  severities=(3,), action_model="none")
        run_sweep(config, data, tmp_path / name, progress=False, log=quiet)
        with (tmp_path / name / "rows.csv").open() as handle:
            rows[name] = list(csv.DictReader(handle))
    assert len(rows["bag"]) == len(rows["folder"]) > 10
    dynamic = {"dynamic", *vocabulary.values_of("dynamic")}
    for bag, folder in zip(rows["bag"], rows["folder"]):
        assert (bag["kind"], bag["row"], bag["frames"]) == (folder["kind"], folder["row"], folder["frames"])
        if set(bag["row"].replace(" ", "").split("/")) <= dynamic and bag["agreement"]:   # 3D velocities, 1 mm steps
            assert abs(float(bag["agreement"]) - float(folder["agreement"])) * int(bag["frames"]) <= 1 + 1e-9
        else:
            assert bag["agreement"] == folder["agreement"], bag["row"]
        if bag["prs"]:
            assert float(bag["prs"]) == pytest.approx(float(folder["prs"]), abs=0.01)


def test_clean_reference_agrees_with_itself_on_the_clean_run(controlled_dataset, predicate_file, tmp_path):
    config = EvaluationConfig(perception="oracle", predicate_config=predicate_file, reference="clean",
                              kinds=("detection_noise",), severities=(2, 4), action_model="none")
    summary = run_sweep(config, controlled_dataset, tmp_path / "clean-ref", progress=False, log=quiet)
    sequences = EpisodeSequences.load(tmp_path / "clean-ref" / "sequences" / f"{summary['episodes'][0]['name']}.npz")
    clean = sequences.condition_index(sequences.conditions[0])
    assert np.array_equal(sequences.y_ref, sequences.y[clean]) and np.array_equal(sequences.c_ref, sequences.c_clean)
    clean_rows = [row for row in csv_rows(tmp_path / "clean-ref" / "rows.csv")
                  if row["kind"] == "none" and row["level"] == "predicate" and row["agreement"]]
    assert clean_rows and all(float(row["agreement"]) == 1.0 for row in clean_rows)


def csv_rows(path):
    import csv
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def test_rebuilding_from_the_saved_sequences_gives_the_same_tables(oracle_run, tmp_path):
    import shutil

    from predrel_ros.tools.evaluation.sweep import rebuild_outputs

    out, summary = oracle_run
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    (copy / "tables.md").unlink()
    (copy / "report.html").unlink()
    rebuilt = rebuild_outputs(copy, log=quiet)
    assert (copy / "tables.md").read_text() == (out / "tables.md").read_text()
    assert json.dumps(rebuilt["tables"], sort_keys=True, default=str) == json.dumps(summary["tables"], sort_keys=True,
                                                                                    default=str)
    assert (copy / "report.html").stat().st_size > 0
    assert json.loads((copy / "summary.json").read_text())["timing"] == summary["timing"]   # the original run's


def test_agreement_json_equals_the_clean_condition_of_the_saved_sequences(oracle_run):
    out, summary = oracle_run
    record = json.loads((out / "agreement.json").read_text())
    correct, counts = {}, {}
    for episode in summary["episodes"]:
        sequences = EpisodeSequences.load(out / "sequences" / f"{episode['name']}.npz")
        clean = sequences.condition_index(CLEAN)
        for row, (name, _, _) in enumerate(sequences.keys):
            y, y_ref = sequences.y[clean][row], sequences.y_ref[row]
            for code, label in enumerate(vocabulary.values_of(name)):
                key = f"{name}/{label}"
                correct[key] = correct.get(key, 0) + int(((y == y_ref) & (y_ref == code)).sum())
                counts[key] = counts.get(key, 0) + int((y_ref == code).sum())
    for key, n in counts.items():
        assert record["values"][key]["n"] == n
        if n:
            assert record["values"][key]["agreement"] == pytest.approx(correct[key] / n)
    for group in vocabulary.GROUPS:
        keys = [f"{name}/{label}" for name in vocabulary.PREDICATES if vocabulary.group_of(name) == group
                for label in vocabulary.values_of(name)]
        n = sum(counts.get(key, 0) for key in keys)
        assert record["groups"][group]["n"] == n
        assert record["groups"][group]["agreement"] == pytest.approx(sum(correct.get(key, 0) for key in keys) / n)
    assert set(record["events"]) == {"grasp", "release"}
    assert {"found_within_3", "extra_per_event", "median_abs_offset"} <= set(record["events"]["release"])
    for event in ("grasp", "release"):   # the listed frames are the events the score counts
        listed = [stream for streams in record["event_frames"].values() for stream in streams
                  if stream["event"] == event]
        assert listed and all(stream["true"] or stream["predicted"] for stream in listed)
        assert sum(len(stream["true"]) for stream in listed) == record["events"][event]["true_events"]
        assert sum(len(stream["predicted"]) for stream in listed) == record["events"][event]["predicted_events"]


def test_agreement_json_splits_each_disagreement_into_absent_unk_and_wrong_value(oracle_run):
    out, summary = oracle_run
    record = json.loads((out / "agreement.json").read_text())
    absent, unk, known = {}, {}, {}
    for episode in summary["episodes"]:
        sequences = EpisodeSequences.load(out / "sequences" / f"{episode['name']}.npz")
        clean = sequences.condition_index(CLEAN)
        episode_known = {}
        for row, (name, _, _) in enumerate(sequences.keys):
            group, y_ref = vocabulary.group_of(name), sequences.y_ref[row]
            frames = y_ref != vocabulary.UNK
            present = sequences.present[clean][row]
            absent[group] = absent.get(group, 0) + int((frames & ~present).sum())
            unk[group] = unk.get(group, 0) + int((frames & present & (sequences.y[clean][row] == vocabulary.UNK)).sum())
            known[group] = known.get(group, 0) + int(frames.sum())
            episode_known[group] = episode_known.get(group, 0) + int(frames.sum())
        assert {g: v["n"] for g, v in record["episodes"][episode["name"]].items()} == \
            {g: n for g, n in episode_known.items() if n}
    for group, n in known.items():
        entry = record["groups"][group]
        assert entry["absent"] == pytest.approx(absent[group] / n)
        assert entry["unk"] == pytest.approx(unk[group] / n)
        assert entry["agreement"] + entry["absent"] + entry["unk"] + entry["wrong_value"] == pytest.approx(1.0)
        assert entry["wrong_value"] >= -1e-12


def test_agreement_json_says_every_reference_entity_of_the_oracle_has_its_partner(oracle_run):
    out, summary = oracle_run
    entities = json.loads((out / "agreement.json").read_text())["entities"]
    frames = sum(c["delivered"] for e in summary["episodes"] for c in e["conditions"] if c["kind"] == "none")
    assert entities["all"]["matched"] == 1.0 and entities["all"]["n"] >= frames
    assert {"surface", "right_hand"} <= set(entities)
    tables_md = (out / "tables.md").read_text()
    assert "## Entities without a partner" in tables_md
    assert f"| all | {entities['all']['n']} | 1.000 | 0.000 | 0.000 |" in tables_md


def test_agreement_summary_line_names_the_groups_and_the_lowest_episodes():
    from predrel_ros.tools.evaluation.agreement import summary_line

    record = {"groups": {"contact": {"agreement": 0.5, "absent": 0.25, "n": 8}, "static": {"agreement": None, "n": 0}},
              "episodes": {"a": {"contact": {"agreement": 0.9, "absent": 0.0, "n": 4}},
                           "b": {"contact": {"agreement": 0.1, "absent": 0.5, "n": 4}}}}
    line = summary_line(record, worst=1)
    assert line == "clean agreement: contact 0.500 (absent 0.25); lowest episodes: b 0.10 (absent 0.50)"
    record["entities"] = {"all": {"n": 10, "matched": 0.7, "other_class": 0.2, "missed": 0.1}}
    assert summary_line(record, worst=1).endswith(
        "; reference entities without a partner: 0.200 under another class, 0.100 missed")


def test_kinds_none_runs_the_clean_condition_alone(controlled_dataset, predicate_file, tmp_path):
    config = EvaluationConfig(perception="oracle", predicate_config=predicate_file, kinds=(), action_model="none")
    summary = run_sweep(config, controlled_dataset, tmp_path / "clean", progress=False, log=quiet)
    for episode in summary["episodes"]:
        sequences = EpisodeSequences.load(tmp_path / "clean" / "sequences" / f"{episode['name']}.npz")
        assert sequences.conditions == [CLEAN]
    assert json.loads((tmp_path / "clean" / "agreement.json").read_text())["groups"]["contact"]["n"] > 0


def test_depth_noise_gives_the_extractor_the_sensor_models_depth_the_same_for_every_run(
        controlled_dataset, predicate_file, tmp_path, monkeypatch):
    """--depth-noise: every depth image the predicates see went through the RGB-D sensor model (holes at
    edges, noisy values), seeded: two runs see the same depth, a run without it the exact one."""
    from predrel_ros.predicates.extractor import PredicateExtractor

    update = PredicateExtractor.update
    seen: list[tuple[float, int]] = []

    def spy(self, frame_index, entities, image_size=None, depth_m=None, camera=None):
        seen.append((float(np.nansum(depth_m)), int(np.isnan(depth_m).sum())))
        return update(self, frame_index, entities, image_size, depth_m, camera)

    monkeypatch.setattr(PredicateExtractor, "update", spy)

    def depths(noise: bool, name: str) -> list[tuple[float, int]]:
        seen.clear()
        config = EvaluationConfig(perception="oracle", predicate_config=predicate_file, kinds=(), action_model="none",
                                  depth_noise=noise)
        run_sweep(config, controlled_dataset, tmp_path / name, progress=False, log=quiet)
        return list(seen)

    exact, noisy, again = depths(False, "exact"), depths(True, "noisy"), depths(True, "again")
    assert noisy == again and len(noisy) == len(exact) > 0
    assert all(holes > exact_holes for (_, holes), (_, exact_holes) in zip(noisy, exact))
    assert json.loads((tmp_path / "noisy" / "config.json").read_text())["evaluation"]["depth_noise"] is True


def test_selection_writes_a_complete_config_from_the_shipped_one(controlled_dataset, tmp_path, monkeypatch):
    """Without --predicate-config the thresholds are selected from config/predicates.yaml on clean
    episodes with their depth (a small grid here: one 3D threshold), and predicates.selected.yaml is a
    complete config: the selected predicate section, confidence weights included, and the trust section."""
    from predrel_ros.core.config_io import read_data
    from predrel_ros.core.package_files import config_file
    from predrel_ros.predicates import selection
    from predrel_ros.predicates.config import PredicateConfig
    from predrel_ros.reliability.trust import TrustConfig

    monkeypatch.setattr(selection, "DEFAULT_GRID", {"static.around_distance_m.value": (0.05, 0.1, 0.2)})
    config = EvaluationConfig(perception="oracle", selection_split="train", kinds=(), action_model="none")
    run_sweep(config, controlled_dataset, tmp_path / "out", progress=False, log=quiet)
    record = json.loads((tmp_path / "out" / "selection.json").read_text())
    assert set(record["scores"]) == {"static.around_distance_m.value"}
    assert len(set(record["scores"]["static.around_distance_m.value"].values())) > 1   # depth reached the rule
    written = tmp_path / "out" / "predicates.selected.yaml"
    assert set(read_data(written)) == set(read_data(config_file("predicates.yaml")))
    selected = PredicateConfig.load(written, section="predicates")
    shipped = PredicateConfig.load(config_file("predicates.yaml"), section="predicates")
    assert selected.replace("static.around_distance_m.value", 0.1).replace(
        "confidence.weights", shipped.confidence.weights) == shipped
    shipped_trust = TrustConfig.load(config_file("predicates.yaml"), section="trust")
    assert TrustConfig.load(written, section="trust") == shipped_trust
