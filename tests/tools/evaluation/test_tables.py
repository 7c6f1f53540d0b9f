import math

import pytest

from predrel_ros.tools.evaluation import tables
from predrel_ros.tools.evaluation.report import markdown_to_html

KINDS = ("blur", "occlusion", "illumination", "low_resolution", "frame_drop", "detection_noise")
SEVERITIES = (1, 2, 3, 4, 5)


def paper_like() -> dict:
    """Tables shaped like the paper's, with its ordering of kinds and groups."""
    worst = {"blur": 0.66, "occlusion": 0.47, "illumination": 0.69, "low_resolution": 0.58, "frame_drop": 0.50,
             "detection_noise": 0.43}
    table8 = {k: {s: 0.9 - (0.9 - worst[k]) * (s - 1) / 4 for s in SEVERITIES} for k in KINDS}
    at5 = {"contact": 0.49, "static": 0.70, "dynamic": 0.46, "derived": 0.39}
    table9 = {g: {0: 0.95, **{s: 0.9 - (0.9 - at5[g]) * (s - 1) / 4 for s in SEVERITIES}} for g in at5}
    table13 = {"Degraded predicates, s=3": {"accuracy": 0.74, "macro_f1": 0.71},
               "Degraded predicates, s=3, without confidence weighting": {"accuracy": 0.64, "macro_f1": 0.60}}
    return {"table8": table8, "table9": table9, "table13": table13}


def verdicts(numbers, kinds=KINDS):
    return [f["holds"] for f in tables.findings(numbers, kinds, SEVERITIES, 3)]


def test_the_papers_own_numbers_reproduce_every_finding():
    assert verdicts(paper_like()) == [True] * 7


def _set(*path_and_value):
    *path, value = path_and_value

    def mutate(numbers):
        target = numbers
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


@pytest.mark.parametrize("mutate, failing", [
    (_set("table8", "blur", 4, 0.95), {0}),                  # not monotonic
    (_set("table9", "contact", 5, 0.99), {1, 2}),            # contact beats static at s=5, and drops least
    (_set("table9", "dynamic", 5, 0.10), {3, 4}),            # dynamic below derived, and drops most
    (_set("table8", "blur", 5, 0.01), {5}),                  # blur the strongest
    (_set("table13", "Degraded predicates, s=3, without confidence weighting", "macro_f1", 0.80), {6}),  # F1 only
])
def test_each_finding_fails_when_its_numbers_say_otherwise(mutate, failing):
    numbers = paper_like()
    mutate(numbers)
    assert verdicts(numbers) == [index not in failing for index in range(7)]


def test_findings_a_run_cannot_test_are_none():
    numbers = paper_like()
    oracle_kinds = ("occlusion", "frame_drop", "detection_noise")
    numbers["table13"]["Degraded predicates, s=3"]["accuracy"] = math.nan
    assert verdicts(numbers, oracle_kinds)[5:] == [None, None]


def test_markdown_tables_become_html_tables():
    html = markdown_to_html("# T\n\n| a | b |\n| --- | --- |\n| 1 | <2> |\n\ntext")
    assert "<h1>T</h1>" in html and "<th>a</th>" in html and "<td>&lt;2&gt;</td>" in html and "<p>text</p>" in html


def test_the_calibration_finding_holds_when_agreement_rises_with_confidence():
    from predrel_ros.reliability.calibration import calibration_summary

    confidence, correct = [], []
    for c in (0.15, 0.25, 0.35, 0.55, 0.75, 0.95):          # 50 estimates per bin, a share c of them right
        confidence += [c] * 50
        correct += [i < round(50 * c) for i in range(50)]
    rising = calibration_summary(confidence, correct)
    falling = calibration_summary(confidence, [not right for right in correct])
    for calibration, holds in ((rising, True), (falling, False)):
        found = tables.findings(paper_like(), KINDS, SEVERITIES, 3, calibration)
        assert len(found) == 8 and found[6]["finding"].startswith("higher confidence means higher agreement")
        assert found[6]["holds"] is holds
