import pytest

from predrel_ros.degradations.table import DEFAULT_TABLE, KINDS, SCHEMA, SEVERITIES, ParameterTable


def test_default_table_hand_checked_values():
    assert DEFAULT_TABLE.row("blur", 5) == {"gaussian_sigma_px": 4.0, "motion_sigma_px": 7.0}
    assert DEFAULT_TABLE.row("blur", 1) == {"gaussian_sigma_px": 1.0, "motion_sigma_px": 1.5}
    assert DEFAULT_TABLE.row("occlusion", 3) == {"area_ratio": 0.3}
    assert DEFAULT_TABLE.row("illumination", 2) == {"low_light_gain": 0.45, "overexposure_gain": 1.6,
                                                    "contrast_factor": 0.45}
    assert DEFAULT_TABLE.row("low_resolution", 5) == {"scale": 0.16}
    assert DEFAULT_TABLE.row("frame_drop", 5) == {"affected_rate": 0.6, "repeat_share": 0.5}
    assert DEFAULT_TABLE.row("detection_noise", 4) == {"box_jitter": 0.1, "miss_rate": 0.2, "false_per_frame": 0.3,
                                                       "track_break_rate": 0.03}
    assert DEFAULT_TABLE.row("none", 0) == {}
    assert DEFAULT_TABLE.columns("illumination") == ("low_light_gain", "overexposure_gain", "contrast_factor")


@pytest.mark.parametrize("kind", KINDS)
def test_severity_zero_is_the_identity_row_and_columns_move_one_way(kind):
    for column in SCHEMA[kind]:
        row = [DEFAULT_TABLE.row(kind, s)[column.name] for s in SEVERITIES]
        if column.identity is not None:
            assert row[0] == column.identity
        if column.direction == "increasing":
            assert row == sorted(row) and row[-1] > row[0]
        elif column.direction == "decreasing":
            assert row == sorted(row, reverse=True) and row[-1] < row[0]


def test_overrides_are_validated_like_the_default():
    table = DEFAULT_TABLE.with_overrides({"blur": {"motion_sigma_px": [0, 1, 2, 3, 4, 5]}})
    assert table.row("blur", 5)["motion_sigma_px"] == 5.0
    assert table.row("blur", 5)["gaussian_sigma_px"] == 4.0
    assert table != DEFAULT_TABLE and ParameterTable(DEFAULT_TABLE.as_dict()) == DEFAULT_TABLE
    bad = [
        ({"blur": {"motion_sigma_px": [1, 1, 2, 3, 4, 5]}}, "blur.motion_sigma_px at severity 0 must be the identity"),
        ({"blur": {"motion_sigma_px": [0, 3, 2, 3, 4, 5]}}, "must not decrease"),
        ({"low_resolution": {"scale": [1, 0.5, 0.6, 0.3, 0.2, 0.1]}}, "must not increase"),
        ({"low_resolution": {"scale": [1, 0.5]}}, "one value per severity"),
        ({"occlusion": {"area_ratio": [0, 0.2, 0.4, 0.6, 0.8, 1.0]}}, r"must lie in \[0.0, 0.95\]"),
        ({"frame_drop": {"repeat_share": [0.5, 0.5, 0.5, 0.5, 0.5, 0.6]}}, "same at every severity"),
        ({"blur": {"radius": [0] * 6}}, "blur has no parameter 'radius'"),
        ({"fog": {"density": [0] * 6}}, "kind must be one of"),
        ({"blur": {"motion_sigma_px": ["a"] * 6}}, "must be 6 numbers"),
    ]
    for overrides, message in bad:
        with pytest.raises(ValueError, match=message):
            DEFAULT_TABLE.with_overrides(overrides)
    with pytest.raises(ValueError, match="kind 'occlusion' is missing"):
        ParameterTable({"blur": DEFAULT_TABLE.as_dict()["blur"]})


def test_the_flat_occlusion_kind_reads_the_occlusion_row():
    table = DEFAULT_TABLE.with_overrides({"occlusion": {"area_ratio": [0, 0.2, 0.4, 0.6, 0.8, 0.9]}})
    assert [table.row("occlusion_flat", s) for s in SEVERITIES] == [table.row("occlusion", s) for s in SEVERITIES]
    assert table.columns("occlusion_flat") == ("area_ratio",) and "occlusion_flat" not in table.as_dict()
    with pytest.raises(ValueError, match="occlusion_flat has no row of its own"):
        DEFAULT_TABLE.with_overrides({"occlusion_flat": {"area_ratio": [0, 0.2, 0.4, 0.6, 0.8, 0.9]}})


def test_row_validates_kind_and_severity():
    with pytest.raises(ValueError, match="severity must lie in 0..5"):
        DEFAULT_TABLE.row("blur", -1)
    with pytest.raises(ValueError, match="severity must be 0 for kind 'none'"):
        DEFAULT_TABLE.row("none", 2)


def test_markdown_lists_every_parameter_once():
    lines = DEFAULT_TABLE.markdown().splitlines()
    assert lines[0] == "| kind | parameter | s=0 | s=1 | s=2 | s=3 | s=4 | s=5 |"
    assert "| blur | gaussian_sigma_px | 0 | 1 | 1.5 | 2 | 3 | 4 |" in lines
    assert len(lines) == 2 + sum(len(columns) for columns in SCHEMA.values())
