import pytest

from predrel_ros.degradations import KINDS
from predrel_ros.tools.evaluation.config import EvaluationConfig, parse_severities


@pytest.mark.parametrize("text, expected", [("0-5", (1, 2, 3, 4, 5)), ("1-5", (1, 2, 3, 4, 5)), ("3", (3,)),
                                            ("1,3,5", (1, 3, 5)), ("5,1, 3", (1, 3, 5)), ("0,2", (2,))])
def test_severities_parse_ranges_lists_and_single_values(text, expected):
    assert parse_severities(text) == expected


@pytest.mark.parametrize("text", ["0", "6", "3-1", "a", "1-x", ""])
def test_bad_severities_are_refused_with_the_accepted_forms(text):
    with pytest.raises(ValueError, match="severities"):
        parse_severities(text)


def test_config_orders_kinds_and_refuses_bad_fields():
    config = EvaluationConfig(kinds=("detection_noise", "blur"), severities=(5, 3, 0))
    assert config.kinds == ("blur", "detection_noise") and config.severities == (3, 5)
    assert EvaluationConfig().kinds == KINDS and not EvaluationConfig().oracle
    assert EvaluationConfig(kinds=()).kinds == ()   # the clean condition alone
    assert EvaluationConfig(kinds=("occlusion_flat", "occlusion")).kinds == ("occlusion", "occlusion_flat")
    for field, value in (("kinds", ("fog",)), ("kinds", ("blur", "blur")), ("reference", "mine"), ("match_iou", 0.0),
                         ("tpc_tolerance", -1), ("jobs", 0), ("moderate_severity", 6), ("severities", (0,))):
        with pytest.raises(ValueError, match=field.split("_")[0]):
            EvaluationConfig(**{field: value})
