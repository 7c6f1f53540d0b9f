"""IDF1 and CLEAR-MOT on small sequences counted by hand."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.tools.evaluation.tracking_metrics import TrackingEvaluator

A = [0, 0, 10, 10]
B = [50, 0, 60, 10]
FAR = [200, 200, 210, 210]


def run(frames):
    evaluator = TrackingEvaluator()
    for gt, hyp in frames:
        evaluator.update([g for g, _ in gt], [b for _, b in gt], [h for h, _ in hyp], [b for _, b in hyp])
    return evaluator.compute()


def test_perfect_tracking():
    scores = run([([(1, A), (2, B)], [(7, A), (8, B)])] * 5)
    assert (scores.idf1, scores.mota, scores.id_switches) == (1.0, 1.0, 0)
    assert (scores.ground_truth, scores.hypotheses, scores.frames) == (10, 10, 5)


def test_swapped_ids_halfway():
    # frames 0-1: A<->7, B<->8; frames 2-3: A<->8, B<->7. Both objects switch once; the best
    # one-to-one id pairing agrees on 2 of 4 frames per object: IDTP = 4 of 8 + 8 -> IDF1 0.5
    frames = [([(1, A), (2, B)], [(7, A), (8, B)])] * 2 + [([(1, A), (2, B)], [(8, A), (7, B)])] * 2
    scores = run(frames)
    assert scores.id_switches == 2
    assert scores.idf1 == pytest.approx(0.5)
    assert scores.mota == pytest.approx(1 - 2 / 8)


def test_fragmented_track():
    # one object, hypothesis id 7 then id 9: one switch; IDTP 2 of 4 + 4 -> IDF1 0.5
    scores = run([([(1, A)], [(7, A)])] * 2 + [([(1, A)], [(9, A)])] * 2)
    assert scores.id_switches == 1 and scores.idf1 == pytest.approx(0.5)
    assert scores.hypothesis_ids == 2


def test_miss_and_false_positive():
    # 4 frames of one object, tracked in 3, a far false positive in the 4th:
    # IDTP 3, gt 4, hyp 4 -> IDF1 0.75, IDP 0.75, IDR 0.75; MOTA 1 - (1 miss + 1 fp) / 4
    scores = run([([(1, A)], [(7, A)])] * 3 + [([(1, A)], [(9, FAR)])])
    assert (scores.misses, scores.false_positives, scores.id_switches) == (1, 1, 0)
    assert (scores.idf1, scores.idp, scores.idr) == (0.75, 0.75, 0.75)
    assert scores.mota == pytest.approx(0.5)


def test_existing_correspondence_is_kept_over_a_better_overlap():
    # frame 1: hypothesis 9 overlaps A exactly, 7 still overlaps enough (IoU 0.67): no switch
    shifted = [1, 0, 11, 10]
    evaluator = TrackingEvaluator()
    evaluator.update([1], [A], [7], [A])
    evaluator.update([1], [A], [7, 9], [shifted, A])
    scores = evaluator.compute()
    assert scores.id_switches == 0 and scores.false_positives == 1


def test_a_switch_is_counted_across_a_gap_in_matching():
    # A matched to 7, then missed for a frame, then matched to 8: one switch
    scores = run([([(1, A)], [(7, A)]), ([(1, A)], []), ([(1, A)], [(8, A)])])
    assert scores.id_switches == 1 and scores.misses == 1


def test_low_overlap_is_not_a_match():
    scores = run([([(1, A)], [(7, [6, 6, 16, 16])])])
    assert scores.matches == 0 and scores.idf1 == 0.0


def test_duplicate_ids_in_a_frame_are_refused():
    with pytest.raises(ValueError, match="unique"):
        TrackingEvaluator().update([1, 1], [A, B], [], [])
    with pytest.raises(ValueError, match="iou_threshold"):
        TrackingEvaluator(0.0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(1, 4), st.integers(1, 6)), max_size=4), min_size=1, max_size=12))
def test_scores_stay_in_range_and_relabelling_hypotheses_keeps_idf1(frames):
    """Random pairings of ground-truth objects to hypothesis ids on fixed, disjoint boxes."""
    boxes = {g: [30 * g, 0, 30 * g + 10, 10] for g in range(1, 5)}
    seqs = []
    for frame in frames:
        gt = {g: h for g, h in frame}  # one hypothesis per object per frame
        hyp = {}
        for g, h in gt.items():
            hyp.setdefault(h, g)
        seqs.append(([(g, boxes[g]) for g in gt], [(h, boxes[g]) for h, g in hyp.items()]))
    scores = run(seqs)
    relabelled = run([(gt, [(h + 100, b) for h, b in hyp]) for gt, hyp in seqs])
    assert 0.0 <= scores.idf1 <= 1.0 and scores.mota <= 1.0
    assert scores.idf1 == relabelled.idf1 and scores.id_switches == relabelled.id_switches
    assert scores.matches + scores.misses == scores.ground_truth
    if scores.idp + scores.idr > 0:  # IDF1 is the harmonic mean of IDP and IDR
        assert np.isclose(scores.idf1, 2 * scores.idp * scores.idr / (scores.idp + scores.idr))


def test_combining_sequences_sums_counts_and_recomputes_ratios():
    from predrel_ros.tools.evaluation.tracking_metrics import combine

    perfect = run([([(1, A)], [(7, A)])] * 4)  # IDTP 4 of 4 + 4
    fragmented = run([([(1, A)], [(7, A)])] * 2 + [([(1, A)], [(9, A)])] * 2)  # IDTP 2 of 4 + 4
    total = combine([perfect, fragmented])
    assert (total.idtp, total.ground_truth, total.hypotheses, total.id_switches) == (6, 8, 8, 1)
    assert total.idf1 == pytest.approx(12 / 16) and total.mota == pytest.approx(1 - 1 / 8)
