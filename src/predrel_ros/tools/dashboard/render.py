"""Drawing the dashboard: a refreshed screen on a terminal, periodic one-line summaries elsewhere.

`render_screen(state, width)` returns the screen's lines (ANSI colours for trust levels when
`colour`), `render_line(state)` one line for logs and pipes. `Display` chooses: on a TTY it redraws
in place (cursor home, each line cleared to its end: no flicker, no scrolling); otherwise (a pipe,
a log file, ros2 launch) it prints `render_line` every `line_period_s` seconds.
"""
from __future__ import annotations

import math
import shutil
import time
from typing import Callable, TextIO

from predrel_ros.predicates.vocabulary import GROUPS
from predrel_ros.reliability.trust import ERROR, OK, STALE, WARN
from predrel_ros.tools.dashboard.view import DashboardState, NodeStatus, ReportView

MODES = ("auto", "screen", "lines")
RESET = "\x1b[0m"
COLOURS = {OK: "\x1b[32m", WARN: "\x1b[33m", ERROR: "\x1b[31;1m", STALE: "\x1b[90m"}
HOME, CLEAR_LINE, CLEAR_BELOW = "\x1b[H", "\x1b[K", "\x1b[J"
HIDE_CURSOR, SHOW_CURSOR = "\x1b[?25l", "\x1b[?25h"
#: a stream not heard for this long is marked silent on the screen
SILENT_AFTER_S = 3.0


def _number(value: float, digits: int = 2) -> str:
    return "  - " if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def _coloured(text: str, level: str, colour: bool) -> str:
    return f"{COLOURS[level]}{text}{RESET}" if colour and level in COLOURS else text


def _level(name: str, colour: bool, width: int = 5) -> str:
    return _coloured(name.ljust(width), name, colour)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "~"


def _report_lines(label: str, report: ReportView, state: DashboardState, width: int, colour: bool) -> list[str]:
    silent = state.seconds_since(label)
    age = f"  (silent {silent:.0f} s)" if silent is not None and silent > SILENT_AFTER_S else ""
    lines = [f"{label}  [{report.reference_mode}]  frame {report.frame_index}  "
             f"condition {report.condition.text}{age}",
             "  group     trust  PRS    TPC-S  conf   n     reason"]
    for group in GROUPS:
        entry = report.groups.get(group)
        if entry is None:
            continue
        row = (f"  {group:<9} {{level}}  {_number(entry.prs)}   {_number(entry.tpc_s)}   "
               f"{_number(entry.mean_confidence)}   {entry.samples:<5} ")
        reason = _fit(entry.reason, max(width - len(row) - 1, 8))
        lines.append(row.format(level=_level(entry.trust, colour)) + reason)
    return lines


def _counter_text(status: NodeStatus) -> str:
    return " ".join(f"{key}={value}" for key, value in status.counters.items() if value) or "nothing counted"


def render_screen(state: DashboardState, width: int = 100, colour: bool = True) -> list[str]:
    width = max(width, 60)
    condition = state.condition.text if state.condition is not None else "unknown (no degradation message yet)"
    lines = [_fit(f"predrel_ros dashboard   frame {max(state.newest_frame, 0)}   "
                  f"elapsed {state.elapsed():.0f} s   degradation: {condition}", width), ""]
    if not state.reports:
        lines.append("reliability: waiting for reports ...")
    for label, report in sorted(state.reports.items()):
        lines += _report_lines(label, report, state, width, colour)
        lines.append("")
    action = state.action
    if action is None:
        lines.append("action: waiting ...")
    else:
        truth = state.ground_truth_of_action()
        mark = "" if truth is None else ("  (correct)" if truth == action.primitive else "  (wrong)")
        lines.append(_fit(f"action: {action.primitive:<9} p={action.probability:.2f}  frame {action.frame_index}  "
                          f"ground truth: {truth or '-'}{mark}", width))
        verdict = "trusted" if action.trusted else f"UNTRUSTED: {action.reason}"
        lines.append("        " + _coloured(_fit(verdict, width - 8), OK if action.trusted else ERROR, colour))
    lines.append("")
    if state.nodes:
        lines.append("nodes (from /diagnostics)")
        for name, status in sorted(state.nodes.items()):
            head = f"  {name:<24} "
            lines.append(head + _level(status.level, colour) + " " + _fit(_counter_text(status), width - len(head) - 7))
    frames = "  ".join(f"{stream} {n}" for stream, n in sorted(state.frames.items()))
    lines.append(_fit(f"messages: {frames}", width))
    return lines


def render_line(state: DashboardState) -> str:
    """One line: frame, condition, trust per group of each report, action."""
    parts = [f"frame {max(state.newest_frame, 0)}",
             state.condition.text if state.condition is not None else "condition unknown"]
    for label, report in sorted(state.reports.items()):
        groups = " ".join(f"{group} {entry.trust}" + ("" if math.isnan(entry.prs) else f" {entry.prs:.2f}")
                          for group in GROUPS if (entry := report.groups.get(group)) is not None)
        parts.append(f"{label}: {groups or 'no groups'}")
    if state.action is not None:
        truth = state.ground_truth_of_action()
        parts.append(f"action {state.action.primitive} {state.action.probability:.2f} "
                     f"{'trusted' if state.action.trusted else 'UNTRUSTED'}" + (f" (truth {truth})" if truth else ""))
    return " | ".join(parts)


class Display:
    """Shows the state on `stream` (see the module docstring); `update()` as often as you like."""

    def __init__(self, stream: TextIO, mode: str = "auto", line_period_s: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if mode not in MODES:
            raise ValueError(f"display mode must be one of {MODES}, got {mode!r}")
        self.stream = stream
        isatty = getattr(stream, "isatty", lambda: False)()
        self.interactive = mode == "screen" or (mode == "auto" and isatty)
        self.line_period_s = line_period_s
        self.clock = clock
        self._last_line: float | None = None
        self._drawn = False

    def update(self, state: DashboardState) -> None:
        if self.interactive:
            size = shutil.get_terminal_size((100, 40))
            lines = render_screen(state, size.columns - 1)[: max(size.lines - 1, 5)]
            prefix = HOME + CLEAR_BELOW + HIDE_CURSOR if not self._drawn else HOME
            self.stream.write(prefix + "".join(line + CLEAR_LINE + "\n" for line in lines) + CLEAR_BELOW)
            self._drawn = True
        else:
            now = self.clock()
            if self._last_line is not None and now - self._last_line < self.line_period_s:
                return
            self._last_line = now
            self.stream.write(render_line(state) + "\n")
        self.stream.flush()

    def close(self, state: DashboardState) -> None:
        """The final picture (left on the screen), or a last line."""
        if self.interactive:
            self.update(state)
            self.stream.write(SHOW_CURSOR)
        else:
            self.stream.write(render_line(state) + "\n")
        self.stream.flush()
