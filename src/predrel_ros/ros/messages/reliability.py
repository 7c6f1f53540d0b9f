"""predrel_ros/PredicateReliability and ReliabilityReport <-> the reliability monitor's records and
report (predrel_ros.reliability.monitor), for rclpy and rosbags messages alike."""
from __future__ import annotations

from predrel_ros.predicates import vocabulary
from predrel_ros.reliability import monitor
from predrel_ros.ros.messages.degradations import degradation_from_msg, degradation_to_msg
from predrel_ros.ros.messages.fields import header_or_default
from predrel_ros.ros.messages.message_classes import (
    PREDICATE_RELIABILITY,
    RCLPY,
    RELIABILITY_REPORT,
    Message,
    MessageClasses,
)

#: trust level names (reliability.trust) <-> the constants of PredicateReliability.msg (the numbers
#: of diagnostic_msgs/DiagnosticStatus)
TRUST_CODES = {"OK": 0, "WARN": 1, "ERROR": 2, "STALE": 3}
TRUST_NAMES = {code: name for name, code in TRUST_CODES.items()}

_RECORD_FLOATS = ("prs", "pds", "tpc", "tpc_s", "cws", "dis", "mean_confidence", "rule_violation_rate")


def reliability_record_to_msg(record: monitor.ReliabilityRecord, *, classes: MessageClasses = RCLPY) -> Message:
    return classes.build(
        PREDICATE_RELIABILITY, predicate=record.predicate, group=record.group, subject=int(record.subject),
        object=int(record.object), samples=int(record.samples), trust=TRUST_CODES[record.trust], reason=record.reason,
        **{name: float(getattr(record, name)) for name in _RECORD_FLOATS})


def reliability_record_from_msg(msg: Message) -> monitor.ReliabilityRecord:
    if msg.trust not in TRUST_NAMES:
        raise ValueError(f"PredicateReliability.trust must be one of {sorted(TRUST_NAMES)}, got {msg.trust}")
    if msg.group not in vocabulary.GROUPS:
        raise ValueError(f"PredicateReliability.group must be one of {vocabulary.GROUPS}, got {msg.group!r}")
    if msg.predicate != msg.group and vocabulary.group_of(msg.predicate) != msg.group:
        raise ValueError(f"PredicateReliability.predicate {msg.predicate!r} is not a predicate of group {msg.group!r}")
    return monitor.ReliabilityRecord(
        predicate=msg.predicate, group=msg.group, subject=int(msg.subject), object=int(msg.object),
        **{name: float(getattr(msg, name)) for name in _RECORD_FLOATS}, samples=int(msg.samples),
        trust=TRUST_NAMES[msg.trust], reason=msg.reason)


def reliability_report_to_msg(report: monitor.ReliabilityReport, header: Message | None = None,
                              degradation: Message | None = None, *, classes: MessageClasses = RCLPY) -> Message:
    """ReliabilityReport of the monitor's report; header and degradation of its newest frame (the
    degradation defaults to the report's kind and severity)."""
    if degradation is None:
        degradation = degradation_to_msg(report.degradation_kind, report.degradation_severity, classes=classes)
    return classes.build(
        RELIABILITY_REPORT, header=header_or_default(header, classes), frame_index=int(report.frame_index or 0),
        window=int(report.window), reference_mode=report.reference_mode, degradation=degradation,
        predicates=[reliability_record_to_msg(record, classes=classes) for record in report.predicates],
        groups=[reliability_record_to_msg(record, classes=classes) for record in report.groups])


def reliability_report_from_msg(msg: Message) -> monitor.ReliabilityReport:
    """The report a ReliabilityReport carries (`trust()` gives the levels per predicate and group)."""
    degradation = degradation_from_msg(msg.degradation)
    records = []
    for field_name in ("predicates", "groups"):
        converted = []
        for i, entry in enumerate(getattr(msg, field_name)):
            try:
                converted.append(reliability_record_from_msg(entry))
            except ValueError as error:
                raise ValueError(f"ReliabilityReport.{field_name}[{i}]: {error}") from None
        records.append(converted)
    return monitor.ReliabilityReport(int(msg.frame_index), int(msg.window), msg.reference_mode, degradation.kind,
                                     degradation.severity, records[0], records[1])
