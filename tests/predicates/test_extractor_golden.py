"""The extractor gives, frame by frame, the predicates recorded from the implementation before it was made
faster (`tests/helpers/predicate_golden.py`): the same estimates in the same order, the same values and
dropped entities, confidences and evidence factors equal to 1e-9."""
from __future__ import annotations

import math

import pytest
from predicate_golden import fingerprint, load, record, scenarios

TOLERANCE = 1e-9


@pytest.fixture(scope="module")
def golden() -> dict:
    return load()


def _differences(expected: list[dict], actual: list[dict]) -> list[str]:
    found = []
    for want, got in zip(expected, actual):
        frame = want["frame"]
        if want["dropped"] != got["dropped"]:
            found.append(f"frame {frame}: dropped {got['dropped']} != {want['dropped']}")
        if [e[:4] for e in want["estimates"]] != [e[:4] for e in got["estimates"]]:
            found.append(f"frame {frame}: estimates (name, subject, object, value) differ, first: "
                         + next(f"{g[:4]} != {w[:4]}" for w, g in zip(want["estimates"] + [[None] * 4],
                                                                    got["estimates"] + [[None] * 4])
                                if w[:4] != g[:4]))
            continue
        for w, g in zip(want["estimates"], got["estimates"]):
            numbers = [(w[4], g[4])] + list(zip(w[5], g[5]))
            if any(not math.isclose(a, b, rel_tol=0.0, abs_tol=TOLERANCE) for a, b in numbers):
                found.append(f"frame {frame}: {w[:4]} confidence / factors {g[4:]} != {w[4:]}")
    return found


def test_extractor_reproduces_the_golden_predicates(controlled_dataset, golden):
    seen = []
    for name, frames in scenarios(controlled_dataset):
        assert name in golden, f"{name}: no golden outputs; regenerate with tests/helpers/predicate_golden.py"
        entry = golden[name]
        assert fingerprint(frames) == entry["input"], (
            f"{name}: the scenario's input changed (simulator or scene); the golden outputs no longer apply")
        actual = record(frames)
        assert len(actual) == len(entry["frames"])
        differences = _differences(entry["frames"], actual)
        assert not differences, f"{name}: {len(differences)} frames differ, e.g. " + "; ".join(differences[:3])
        seen.append(name)
    assert sorted(seen) == sorted(golden)


def test_golden_scenarios_exercise_every_path(golden):
    """The recorded outputs are not trivial: contact T and N, grasps, 3D dynamic paths and the
    entity bound all occur, and depth changes some predicates."""
    values = {(e[0], e[3]) for entry in golden.values() for f in entry["frames"] for e in f["estimates"]}
    for needed in [("contact", "T"), ("contact", "N"), ("grasp", "T"), ("static", "In"), ("static", "Sup")]:
        assert needed in values
    assert any(f["dropped"] for f in golden["crowd/no_depth"]["frames"])
    for base in ("controlled/ep0001_insert", "scripted"):
        with_depth = [e[:5] for f in golden[f"{base}/depth"]["frames"] for e in f["estimates"]]
        without = [e[:5] for f in golden[f"{base}/no_depth"]["frames"] for e in f["estimates"]]
        assert with_depth != without
