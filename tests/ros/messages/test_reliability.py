import math

import pytest
from ros_testing import require_ros

require_ros()

from message_cases import flickering_contact_report  # noqa: E402

from predrel_ros.ros.messages.reliability import TRUST_CODES, reliability_report_from_msg, reliability_report_to_msg  # noqa: E402

pytestmark = pytest.mark.ros


def test_reliability_report_round_trips_with_nan_metrics_and_trust_levels():
    from predrel_ros.msg import PredicateReliability

    report = flickering_contact_report()
    msg = reliability_report_to_msg(report)
    assert (msg.degradation.kind, msg.degradation.severity, msg.frame_index) == ("blur", 2, 11)
    back = reliability_report_from_msg(msg)

    def carried(record):          # to_dict: NaN as None; the agreement rate is not in the message
        return {key: value for key, value in record.to_dict().items() if key != "agreement"}
    assert [carried(r) for r in back.predicates + back.groups] == \
        [carried(r) for r in report.predicates + report.groups]
    assert report.record("contact").agreement == 0.75                      # frames 8..11: T N T T against T
    assert math.isnan(back.record("contact").agreement)
    assert back.trust()["contact"].level == report.trust()["contact"].level == "STALE"
    assert math.isnan(back.record("contact").dis)
    msg.groups[0].trust = 7
    with pytest.raises(ValueError, match=r"ReliabilityReport.groups\[0\]: PredicateReliability.trust"):
        reliability_report_from_msg(msg)
    assert TRUST_CODES["STALE"] == PredicateReliability.STALE == 3
