"""The monitor gives, frame by frame, the reports recorded from the implementation before it was made
faster (`tests/helpers/monitor_golden.py`): the same records in the same order with the same trust
levels, reasons, sample counts and counters, and every metric equal to 1e-9 (NaN where it was NaN)."""
from __future__ import annotations

import math

import pytest
from monitor_golden import SCENARIOS, load, reports

TOLERANCE = 1e-9


@pytest.fixture(scope="module")
def golden() -> dict:
    return load()


def _same(want, got) -> bool:
    if isinstance(want, float) or isinstance(got, float):
        if want is None or got is None:
            return want is None and got is None
        return math.isclose(want, got, rel_tol=0.0, abs_tol=TOLERANCE)
    return want == got


def _record_differences(where: str, expected: list[dict], actual: list[dict]) -> list[str]:
    if len(expected) != len(actual):
        return [f"{where}: {len(actual)} records != {len(expected)}"]
    found = []
    for want, got in zip(expected, actual):
        name = f"{where} {want['predicate']}({want['subject']}, {want['object']})"
        if want.keys() != got.keys():
            found.append(f"{name}: fields {sorted(got)} != {sorted(want)}")
            continue
        found += [f"{name}.{key}: {got[key]!r} != {want[key]!r}" for key in want if not _same(want[key], got[key])]
    return found


def _differences(expected: list[dict], actual: list[dict]) -> list[str]:
    if len(expected) != len(actual):
        return [f"{len(actual)} reports != {len(expected)}"]
    found = []
    for want, got in zip(expected, actual):
        where = f"frame {want['frame_index']}"
        for key in ("frame_index", "window", "reference_mode", "degradation", "counters", "tag"):
            if want[key] != got[key]:
                found.append(f"{where}: {key} {got[key]!r} != {want[key]!r}")
        found += _record_differences(f"{where} predicates", want["predicates"], got["predicates"])
        found += _record_differences(f"{where} groups", want["groups"], got["groups"])
    return found


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_monitor_reproduces_the_golden_reports(controlled_dataset, golden, scenario):
    differences = _differences(golden[scenario], reports(controlled_dataset, scenario))
    assert not differences, f"{scenario}: {len(differences)} differences, e.g. " + "; ".join(differences[:5])


def test_golden_reports_exercise_every_path(golden):
    """The recorded reports are not trivial: every trust level, reasons, expected agreements from the
    model and the profile, dropped frames, and the reference modes' agreement."""
    for scenario, frames in golden.items():
        levels = {record["trust"] for report in frames for record in report["predicates"]}
        assert levels == {"OK", "WARN", "ERROR", "STALE"}, (scenario, levels)
        assert any(record["reason"] for report in frames for record in report["groups"]), scenario
        assert len(frames) < 180 and frames[-1]["frame_index"] == 179, scenario       # 5 frames dropped
    for scenario in ("self_model", "self_profile"):
        assert any(r["expected_agreement"] is not None for f in golden[scenario] for r in f["groups"]), scenario
    for scenario in ("clean_twin", "ground_truth"):
        assert any(r["agreement"] is not None for f in golden[scenario] for r in f["predicates"]), scenario
    assert golden["self_model"] != golden["self_profile"]
