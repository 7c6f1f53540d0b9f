"""The trust estimator fitted on saved eval runs, and the same model measured live by the sweep."""
from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.reliability.trust import OK
from predrel_ros.reliability.trust_estimator import GROUP_SIGNALS, TrustModel
from predrel_ros.tools.evaluation.config import NO_ACTION, EvaluationConfig
from predrel_ros.tools.evaluation.sweep import run_sweep
from predrel_ros.tools.evaluation.trust_fitting import (
    LOEO_SUMMARY,
    evaluate,
    fit_model,
    load_runs,
    modelled,
    modelled_values,
)
from predrel_ros.tools.evaluation.trust_measurement import GROUPS, trust_document

KINDS = ("occlusion", "detection_noise")


def _config(predicate_file, **extra):
    return EvaluationConfig(perception="oracle", predicate_config=predicate_file, kinds=KINDS, severities=(3, 5),
                            action_model=NO_ACTION, test_split="train", max_episodes=2, trust_window=20, **extra)


@pytest.fixture(scope="module")
def run(controlled_dataset, predicate_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("trust-fit") / "run"
    run_sweep(_config(predicate_file), controlled_dataset, out, progress=False, log=lambda _: None)
    return out


def test_fit_on_saved_runs_and_the_sweep_measures_the_model_as_modelled(run, controlled_dataset, predicate_file,
                                                                         tmp_path):
    episodes = load_runs([run])
    assert len(episodes) == 2 and all(np.isfinite(s.features[25:, 0]).all() for _, series, _ in episodes
                                      for s in series)
    model = fit_model(episodes, window=20, provenance={"test": True})
    assert set(model.groups) <= set(GROUPS) and "contact" in model.groups
    for group in model.groups.values():
        assert 0.0 <= group.error <= group.warn <= 1.0
    path = model.save(tmp_path / "model.json")
    # the sweep with this model gives, frame by frame, what the model gives on the saved inputs
    live = tmp_path / "live"
    run_sweep(_config(predicate_file, trust_model=str(path)), controlled_dataset, live, progress=False,
              log=lambda _: None)
    loaded = TrustModel.load(path)
    for (_, saved, saved_switches), (_, measured, measured_switches) in zip(episodes, load_runs([live])):
        for offline, online in list(zip(saved, measured)) + [(saved_switches[k], measured_switches[k])
                                                             for k in saved_switches]:
            again = modelled(loaded, offline)
            assert np.array_equal(again.flagged, online.flagged)
            assert np.allclose(again.expected, online.expected, equal_nan=True, atol=1e-9)
    document = evaluate(loaded, episodes, leave_one_kind_out=True)
    summary = document["summary"]
    assert set(summary["lok_recall_by_kind"]) == set(KINDS) and summary["model"] == {"test": True}
    known = [v for v in summary["lok_recall_by_kind"].values() if v is not None]
    assert summary["lok_recall_min"] == (min(known) if known else None)
    assert 0.0 <= summary["mae"] <= 1.0


def test_fitting_without_a_kind_leaves_its_windows_out(run):
    episodes = load_runs([run])
    full = fit_model(episodes, window=20)
    without = fit_model(episodes, window=20, without_kinds=KINDS)
    expected = [modelled(model, episodes[0][1][-1]).expected for model in (full, without)]
    assert not np.allclose(*expected, equal_nan=True)
    assert full.profile.to_dict() == without.profile.to_dict()      # the profile is the clean windows'


def test_runs_without_the_estimators_inputs_are_refused(tmp_path, run):
    with pytest.raises(UserError, match="no sequences"):
        load_runs([tmp_path])
    old = tmp_path / "old"
    shutil.copytree(run, old)
    trust_file = next((old / "sequences").glob("*.trust.npz"))
    with np.load(trust_file) as data:
        arrays = {name: data[name] for name in data.files}
    arrays["features"] = arrays["features"][..., :-1]           # written by a version with one feature less
    np.savez(trust_file, **arrays)
    with pytest.raises(UserError, match="run `predrel eval` again"):
        load_runs([old])


@pytest.mark.parametrize("budget", [0.0, 0.05, 0.3])
def test_bounds_for_a_false_alarm_budget_flag_at_most_that_share_of_the_clean_windows(run, budget):
    """The WARN bounds chosen for a budget of clean false alarms keep trust.json's false_alarm_clean
    on the fit episodes within it, and a larger budget never gives lower bounds."""
    episodes = load_runs([run])
    model = fit_model(episodes, window=20, clean_false_alarms=budget)
    summary = evaluate(model, episodes)["summary"]
    assert summary["false_alarm_clean"] <= budget + 1e-9
    wider = fit_model(episodes, window=20, clean_false_alarms=min(budget + 0.2, 0.9))
    for name, group in model.groups.items():
        assert group.warn <= wider.groups[name].warn + 1e-12
        assert group.risk_warn >= wider.groups[name].risk_warn - 1e-12
        assert group.error == min(0.4, group.warn)
    with pytest.raises(ValueError, match="clean_false_alarms"):
        fit_model(episodes, window=20, clean_false_alarms=1.0)


def test_a_group_the_monitor_gave_on_the_evidence_alone_is_judged_by_the_model(run):
    """A run without a model records such a group STALE (not judged), its only signal UNK rate 1."""
    episodes = load_runs([run])
    model = fit_model(episodes, window=20)
    row = GROUPS.index("contact")
    series = episodes[0][1][0]
    blind = dataclasses.replace(series, signals=series.signals.copy(), judged=series.judged.copy())
    blind.signals[row, 10:] = np.nan
    blind.signals[row, 10:, GROUP_SIGNALS.index("unk_rate")] = 1.0
    blind.judged[row, 10:] = False
    values = modelled(model, blind)
    contact = model.groups["contact"]
    assert np.isfinite(values.expected[row, 10:]).all()
    risk = modelled_values(model, blind)[1]
    assert np.array_equal(values.flagged[row, 10:], contact.levels(values.expected[row, 10:], risk[row, 10:]) != OK)
    assert (values.expected[row, 10:] < modelled(model, series).expected[row, 10:].max()).all()
    blind.signals[row, 10:] = np.nan                                 # no group at all: nothing to judge
    values = modelled(model, blind)
    assert np.isnan(values.expected[row, 10:]).all() and not values.flagged[row, 10:].any()


def test_a_group_with_only_young_predicates_is_judged_where_the_evidence_covered_min_frames(run):
    """A run without a model records such a group STALE; `evidence_covered` says the model judges it."""
    episodes = load_runs([run])
    model = fit_model(episodes, window=20)
    row = GROUPS.index("contact")
    series = episodes[0][1][-1]                                          # occlusion 5
    assert series.evidence_covered[15:].all() and not series.evidence_covered[:5].any()    # saved by the run
    with_predicates = np.isfinite(series.signals[row, :, GROUP_SIGNALS.index("confidence")])
    young = dataclasses.replace(series, judged=series.judged.copy(),
                                evidence_covered=np.zeros_like(series.evidence_covered))
    young.judged[row] = False
    assert not modelled(model, young).flagged[row, with_predicates].any()     # as if saved before the flag
    young.evidence_covered[:] = series.evidence_covered
    values = modelled(model, young)
    covered = with_predicates & series.evidence_covered
    flags = model.groups["contact"].levels(values.expected[row], modelled_values(model, young)[1][row]) != OK
    assert covered.any() and np.array_equal(values.flagged[row, covered], flags[covered]) and flags[covered].any()
    assert not values.flagged[row, with_predicates & ~series.evidence_covered].any()


def test_leaving_one_episode_out_judges_each_episode_by_a_model_fitted_on_the_others(run):
    episodes = load_runs([run])
    model = fit_model(episodes, window=20)
    document = evaluate(model, episodes, leave_one_episode_out=True)
    loeo = document["summary"]["loeo"]
    fitted_on_other = [fit_model([other], window=20) for other in episodes[::-1]]
    by_hand = trust_document([(sequences, [modelled(held_out, s) for s in series],
                               {kind: modelled(held_out, s) for kind, s in switches.items()})
                              for (sequences, series, switches), held_out in zip(episodes, fitted_on_other)], 20)
    assert loeo["episodes"] == 2
    assert {key: loeo[key] for key in LOEO_SUMMARY} == {key: by_hand["summary"][key] for key in LOEO_SUMMARY}
    # a model judged on the episodes it was fitted on is not what a new scene gets
    assert loeo["mae"] != document["summary"]["mae"]
    # the per-episode errors make up the pooled one
    rows = document["episodes"]
    assert [row["episode"] for row in rows] == [sequences.episode for sequences, _, _ in episodes]
    assert sum(row["group_windows"] for row in rows) == document["summary"]["group_windows"]
    assert np.isclose(sum(row["mae"] * row["group_windows"] for row in rows) / document["summary"]["group_windows"],
                      document["summary"]["mae"])
    assert all(0.0 <= value <= 1.0 for row in rows for value in row["clean_true"].values())


def test_leaving_one_episode_out_of_one_episode_is_refused(run):
    episodes = load_runs([run])[:1]
    with pytest.raises(UserError, match="at least two episodes"):
        evaluate(fit_model(episodes, window=20), episodes, leave_one_episode_out=True)
