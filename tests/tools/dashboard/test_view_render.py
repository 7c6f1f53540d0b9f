import io
import math

import pytest

from predrel_ros.tools.dashboard.render import CLEAR_LINE, HOME, Display, render_line, render_screen
from predrel_ros.tools.dashboard.view import (
    ActionView,
    Condition,
    DashboardState,
    GroupTrust,
    NodeStatus,
    ReportView,
    trust_name,
)


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def report(frame: int, condition=Condition("occlusion", 4), contact="OK", static="ERROR") -> ReportView:
    return ReportView(frame, "clean_twin", condition, {
        "contact": GroupTrust("contact", contact, prs=0.93, tpc_s=0.97, mean_confidence=0.81, samples=30),
        "static": GroupTrust("static", static, prs=0.41, tpc_s=0.6, mean_confidence=0.5, samples=30,
                             reason="prs 0.41 < 0.60"),
        "derived": GroupTrust("derived", "STALE"),
    })


@pytest.fixture
def state() -> DashboardState:
    clock = Clock()
    state = DashboardState(clock)
    clock.now += 12
    state.on_degradation(Condition("occlusion", 4))
    state.on_report("reliability", report(57))
    state.on_ground_truth_action(57, "grasp")
    state.on_action(ActionView(57, "grasp", 0.83, False, "contact untrusted (ERROR)"))
    state.on_node_status(NodeStatus("/degraded/perception", "WARN", "stale frames",
                                    {"image_raw.processed": 50, "image_raw.dropped_stale": 7, "malformed": 0}))
    state.on_predicates("degraded/predicates", 58)
    return state


def test_trust_names_follow_the_message_numbers():
    assert [trust_name(i) for i in range(4)] == ["OK", "WARN", "ERROR", "STALE"]
    assert trust_name(9) == "level 9"


def test_the_screen_shows_condition_groups_action_and_counters(state):
    lines = render_screen(state, width=100, colour=False)
    text = "\n".join(lines)
    assert lines[0] == "predrel_ros dashboard   frame 58   elapsed 12 s   degradation: occlusion 4"
    assert "reliability  [clean_twin]  frame 57  condition occlusion 4" in text
    assert "  contact   OK     0.93   0.97   0.81   30    " in lines
    assert any(line.startswith("  static    ERROR  0.41") and line.endswith("prs 0.41 < 0.60") for line in lines)
    assert "  derived   STALE    -      -      -    0     " in lines
    assert "dynamic" not in text  # no entry, no row
    assert "action: grasp     p=0.83  frame 57  ground truth: grasp  (correct)" in lines
    assert "        UNTRUSTED: contact untrusted (ERROR)" in lines
    assert "  /degraded/perception     WARN  image_raw.processed=50 image_raw.dropped_stale=7" in lines
    assert all(len(line) <= 100 for line in lines)


def test_colour_marks_trust_levels(state):
    text = "\n".join(render_screen(state, colour=True))
    assert "\x1b[31;1mERROR\x1b[0m" in text and "\x1b[32mOK   \x1b[0m" in text


def test_a_silent_report_is_marked(state):
    state.clock.now += 10
    assert "(silent 10 s)" in render_screen(state, colour=False)[2]


def test_the_screen_fits_a_narrow_terminal(state):
    assert all(len(line) <= 60 for line in render_screen(state, width=40, colour=False))


def test_one_line_summary(state):
    assert render_line(state) == ("frame 58 | occlusion 4 | reliability: contact OK 0.93 static ERROR 0.41 "
                                  "derived STALE | action grasp 0.83 UNTRUSTED (truth grasp)")


def test_an_empty_state_says_what_it_waits_for():
    state = DashboardState(Clock())
    text = "\n".join(render_screen(state, colour=False))
    assert "degradation: unknown" in text and "waiting for reports" in text and "action: waiting" in text
    assert render_line(state) == "frame 0 | condition unknown"


def test_ground_truth_memory_is_bounded():
    state = DashboardState(Clock())
    for i in range(1000):
        state.on_ground_truth_action(i, "idle")
    assert len(state.ground_truth) == 600 and min(state.ground_truth) == 400


class Pipe(io.StringIO):
    def isatty(self) -> bool:
        return False


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_pipe_gets_periodic_lines(state):
    clock = Clock()
    stream = Pipe()
    display = Display(stream, line_period_s=5.0, clock=clock)
    assert not display.interactive
    display.update(state)
    clock.now += 2
    display.update(state)
    clock.now += 4
    display.update(state)
    display.close(state)
    assert stream.getvalue().count("\n") == 3 and "\x1b" not in stream.getvalue()


def test_a_terminal_is_redrawn_in_place(state):
    stream = Terminal()
    display = Display(stream)
    assert display.interactive
    display.update(state)
    display.update(state)
    display.close(state)
    frames = stream.getvalue().split(HOME)
    assert len(frames) == 4  # first draw clears below home, then one redraw per update and close
    assert all(line.endswith(CLEAR_LINE) for line in frames[-1].split("\n")[:-1])
    assert stream.getvalue().endswith("\x1b[?25h")


def test_display_modes_are_checked():
    with pytest.raises(ValueError, match="display mode must be one of"):
        Display(Pipe(), mode="fancy")
    assert Display(Pipe(), mode="screen").interactive and not Display(Terminal(), mode="lines").interactive


def test_nan_values_render_as_dashes():
    entry = GroupTrust("contact", "OK")
    assert math.isnan(entry.prs)
