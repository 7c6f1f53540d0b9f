import pytest
from ros_testing import require_ros

require_ros()

from predrel_ros.tools.cli import main as cli  # noqa: E402

pytestmark = pytest.mark.ros


def test_transport_check_passes_between_two_processes(capsys):
    assert cli.main(["transport-check", "--frames", "6", "--rate", "30", "--encoding", "bgra8"]) == 0
    out = capsys.readouterr().out
    assert "images:     6 intact, 0 changed, 0 lost" in out
    assert "predicates: 6 intact, 0 changed, 0 lost" in out
    assert "PASS" in out


@pytest.mark.parametrize("argv, message", [
    (["--frames", "0"], "--frames must be >= 1"),
    (["--rate", "0"], "--rate must lie in (0, 1000] Hz"),
    (["--encoding", "yuv422"], "Image.encoding 'yuv422' is not supported"),
])
def test_bad_arguments_are_refused(argv, message, capsys):
    assert cli.main(["transport-check", *argv]) == 1
    assert message in capsys.readouterr().err
