"""FrameRows: the estimates of a frame evaluated by stages, as the scalar definition gives them one by one."""
import numpy as np
import pytest

from predrel_ros.predicates import vocabulary
from predrel_ros.predicates.confidence import GeometricMeanConfidence
from predrel_ros.predicates.config import ConfidenceConfig
from predrel_ros.predicates.engine import FrameRows
from predrel_ros.predicates.stream_windows import StreamWindows

WEIGHTS = ConfidenceConfig().weights
FACTORS = (0.9, 0.8, 0.7, 0.6)


def frame(windows, index, floor=0.2):
    return FrameRows(windows, GeometricMeanConfidence(WEIGHTS), floor, index, index - windows.window + 1)


def test_rows_give_q_tmp_confidence_floor_and_the_order_asked_for():
    windows = StreamWindows(3)
    model = GeometricMeanConfidence(WEIGHTS)
    history = [1, 1, 0]                               # contact(1, 2) over three frames
    for index, code in enumerate(history):
        rows = frame(windows, index)
        contact = rows.add(5, vocabulary.CONTACT, 1, 2, code, 0.6, FACTORS)
        rows.add(1, vocabulary.STATIC, 1, 2, 2, 0.001, FACTORS)      # a margin that puts it under the floor
        rows.evaluate()
        assert rows.output(contact) == (code, 0.6)
        grasp = rows.add(3, vocabulary.GRASP, 1, 2, *rows.output(contact), FACTORS)
        estimates = rows.estimates()
    assert [e.name for e in estimates] == [vocabulary.STATIC, vocabulary.GRASP, vocabulary.CONTACT]   # by order
    static, derived, contact_estimate = estimates
    tmp = history.count(0) / len(history)
    assert contact_estimate.evidence == {"det": 0.9, "seg": 0.8, "trk": 0.7, "vis": 0.6, "sp": 0.6, "tmp": tmp}
    assert contact_estimate.confidence == pytest.approx(model(vocabulary.CONTACT, (*FACTORS, 0.6, tmp)), abs=1e-15)
    assert contact_estimate.value == "N" and contact_estimate.frame_index == 2
    assert static.value == vocabulary.UNK_LABEL and static.evidence["tmp"] == 1.0     # raw value kept in q_tmp
    assert derived.value == "N" and rows.output(grasp)[0] == 0


def test_pushed_rows_can_be_read_before_they_are_evaluated():
    windows = StreamWindows(4)
    for index, code in enumerate([1, 0, 1]):
        rows = frame(windows, index)
        row = rows.add(0, vocabulary.CONTACT, 3, 4, code, 1.0, FACTORS)
        rows.push()
        share = windows.shares(rows.window_rows([row]), 1, rows.window_start).tolist()
        rows.estimates()
    assert share == [2 / 3]


def test_rows_added_at_once_equal_rows_added_one_by_one():
    """add_many gives the same estimates as add; outputs reads evaluated rows at once."""
    results = []
    for bulk in (False, True):
        windows = StreamWindows(3)
        for index, codes in enumerate([[1, 0], [1, 1], [0, 1]]):
            rows = frame(windows, index)
            if bulk:
                added = rows.add_many([4, 2], vocabulary.CONTACT, [1, 3], [2, 4], codes, [0.6, 0.3], [FACTORS, FACTORS])
            else:
                added = [rows.add(order, vocabulary.CONTACT, s, o, code, sp, FACTORS)
                         for order, s, o, code, sp in zip([4, 2], [1, 3], [2, 4], codes, [0.6, 0.3])]
            rows.evaluate()
            outputs = rows.outputs(np.asarray(added))
            assert outputs[0].tolist() == [rows.output(row)[0] for row in added]
            assert outputs[1].tolist() == [0.6, 0.3]
            estimates = rows.estimates()
        results.append([(e.name, e.subject, e.object, e.value, e.confidence, e.evidence, e.frame_index, e.group)
                        for e in estimates])
    assert results[0] == results[1]
    assert [subject for _, subject, *_ in results[0]] == [3, 1]         # by order
