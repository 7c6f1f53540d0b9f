"""The runner with fake node processes (small Python scripts); the real nodes: test_runner_ros.py."""
import io
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.ros.run.run_file import NodeSpec, RunFile, load_run_file
from predrel_ros.ros.run.runner import Runner, format_commands, node_command, node_process_environment

#: fake nodes, chosen by the node's executable name; each gets the runner's --ros-args in sys.argv
SCRIPTS = {
    # runs until SIGINT, then says so and exits 0 (as run_node does)
    "sleeper": ("import signal, sys, time\n"
                "signal.signal(signal.SIGINT, lambda *a: (print('stopping', flush=True), sys.exit(0)))\n"
                "print('up', ' '.join(sys.argv[1:]), flush=True)\n"
                "time.sleep(60)\n"),
    # plays long enough for the other fake nodes to start up (Python start-up takes a second on a busy machine)
    "finisher": "import time; print('playing'); time.sleep(1.5); print('done')",
    "crasher": "import sys, time; time.sleep(0.2); print('line 1'); print('boom', file=sys.stderr); sys.exit(3)",
    # dies after the finisher is done: during the finish grace period
    "late_crasher": "import sys, time; time.sleep(3.0); sys.exit(3)",
    "stubborn": ("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('up', flush=True)\n"
                 "time.sleep(60)\n"),
    "env": "import os; print('X', os.environ.get('X'), 'Y', os.environ.get('Y'), 'Z', os.environ.get('Z'))",
}


def fake_command(spec: NodeSpec) -> list[str]:
    return [sys.executable, "-c", SCRIPTS[spec.executable]]


def make_run(*nodes: NodeSpec, env=None, timeout: float = 5.0, grace: float = 0.0) -> RunFile:
    return RunFile(path=Path("test.run.yaml"), description="", arguments=(), env=env or {}, nodes=nodes,
                   shutdown_timeout_s=timeout, finish_grace_s=grace)


def make_runner(run: RunFile, tmp_path: Path) -> tuple[Runner, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Runner(run, tmp_path / "logs", out=out, err=err, command_for=fake_command), out, err


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_node_that_finishes_ends_the_run_and_the_others_are_interrupted(tmp_path):
    run = make_run(NodeSpec("replay", "finisher", exit_ok=True),
                   NodeSpec("perception", "sleeper", namespace="degraded", parameters={"rate": 2}))
    runner, out, err = make_runner(run, tmp_path)
    assert runner.run() == 0
    lines = out.getvalue().splitlines()
    assert "[replay] playing" in lines and "[replay] done" in lines
    assert ("[degraded/perception] up --ros-args -r __node:=perception -r __ns:=/degraded -p rate:=2" in lines)
    assert "[degraded/perception] stopping" in lines
    assert "replay finished: stopping the other nodes" in err.getvalue()
    assert (tmp_path / "logs" / "degraded_perception.log").read_text().splitlines()[-1] == "stopping"
    assert (tmp_path / "logs" / "replay.log").read_text() == "playing\ndone\n"
    assert all(node.process.returncode == 0 for node in runner.processes)


def test_the_others_drain_for_the_finish_grace_period(tmp_path):
    run = make_run(NodeSpec("replay", "finisher", exit_ok=True), NodeSpec("sleeper", "sleeper"), grace=1.5)
    runner, out, err = make_runner(run, tmp_path)
    start = time.monotonic()
    assert runner.run() == 0
    assert time.monotonic() - start >= 3.0  # 1.5 s of play, 1.5 s of grace
    assert "replay finished: stopping the other nodes in 1.5 s" in err.getvalue()
    assert "[sleeper] stopping" in out.getvalue()


def test_a_required_node_dying_during_the_grace_period_fails_the_run(tmp_path):
    run = make_run(NodeSpec("replay", "finisher", exit_ok=True), NodeSpec("late", "late_crasher"), grace=5.0)
    runner, _, err = make_runner(run, tmp_path)
    start = time.monotonic()
    assert runner.run() == 1
    assert time.monotonic() - start < 5   # the failure ends the grace period (1.5 s of play + 5 s otherwise)
    assert "replay finished: stopping the other nodes in 5 s" in err.getvalue()
    assert "node late exited with code 3" in err.getvalue()


def test_a_required_node_that_dies_fails_the_run_naming_it_with_its_last_lines(tmp_path):
    run = make_run(NodeSpec("sleeper", "sleeper"),
                   NodeSpec("perception", "crasher", namespace="degraded", output="log"))
    runner, out, err = make_runner(run, tmp_path)
    assert runner.run() == 1
    report = err.getvalue()
    assert "node degraded/perception exited with code 3" in report
    assert "  | line 1\n" in report and "  | boom\n" in report
    assert f"full output: {tmp_path / 'logs' / 'degraded_perception.log'}" in report
    assert "[degraded/perception]" not in out.getvalue()  # output: log keeps it off the terminal
    assert "[sleeper] stopping" in out.getvalue()


def test_a_node_that_is_not_required_may_die(tmp_path):
    run = make_run(NodeSpec("viewer", "crasher", required=False), NodeSpec("replay", "finisher", exit_ok=True))
    runner, out, err = make_runner(run, tmp_path)
    assert runner.run() == 0
    assert "viewer exited with code 3 (not required: the run goes on)" in err.getvalue()


def test_a_required_node_that_exits_0_without_exit_ok_fails_the_run(tmp_path):
    run = make_run(NodeSpec("worker", "finisher"), NodeSpec("sleeper", "sleeper"))
    runner, _, err = make_runner(run, tmp_path)
    assert runner.run() == 1
    assert "node worker exited (code 0) while the run was going on" in err.getvalue()


def test_the_run_ends_when_every_node_has_exited(tmp_path):
    runner, _, err = make_runner(make_run(NodeSpec("a", "finisher", required=False)), tmp_path)
    assert runner.run() == 0
    assert "every node has exited" in err.getvalue()


def test_a_node_that_ignores_the_interrupt_is_killed_after_the_timeout(tmp_path):
    run = make_run(NodeSpec("stubborn", "stubborn"), NodeSpec("replay", "finisher", exit_ok=True), timeout=0.5)
    runner, out, err = make_runner(run, tmp_path)
    start = time.monotonic()
    assert runner.run() == 1
    assert time.monotonic() - start < 5
    assert "still running after 0.5 s: stubborn; killing" in err.getvalue()
    assert [o.reason for o in runner.outcomes if o.label == "stubborn"] == ["did not stop in time and was killed"]
    assert runner.processes[0].process.returncode == -signal.SIGKILL


def test_a_stop_request_interrupts_every_node(tmp_path):
    run = make_run(NodeSpec("a", "sleeper"), NodeSpec("b", "sleeper", namespace="clean"))
    runner, out, err = make_runner(run, tmp_path)
    threading.Timer(1.0, runner.request_stop, (signal.SIGTERM,)).start()
    assert runner.run() == 128 + signal.SIGTERM
    assert "SIGTERM: stopping a, clean/b" in err.getvalue()
    assert "[a] stopping" in out.getvalue() and "[clean/b] stopping" in out.getvalue()


def test_a_second_stop_request_kills_at_once(tmp_path):
    run = make_run(NodeSpec("stubborn", "stubborn"), timeout=30)
    runner, _, err = make_runner(run, tmp_path)
    threading.Timer(0.8, runner.request_stop, (signal.SIGINT,)).start()
    threading.Timer(1.6, runner.request_stop, (signal.SIGINT,)).start()
    start = time.monotonic()
    assert runner.run() == 128 + signal.SIGINT
    assert time.monotonic() - start < 10
    assert "second interrupt: killing every node now" in err.getvalue()


def test_nodes_are_in_their_own_process_group_and_die_with_the_runner(tmp_path):
    """A killed runner (no chance to stop anything) leaves no node behind."""
    run_path = tmp_path / "one.run.yaml"
    run_path.write_text("nodes: [{name: s, executable: sleeper}]\n")
    code = ("import sys, threading\n"
            "from pathlib import Path\n"
            "from predrel_ros.ros.run.run_file import load_run_file\n"
            "from predrel_ros.ros.run.runner import Runner\n"
            f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
            "from test_runner import fake_command\n"
            f"runner = Runner(load_run_file({str(run_path)!r}), Path({str(tmp_path / 'logs')!r}),"
            " command_for=fake_command, env_for=lambda run, spec: dict(__import__('os').environ))\n"
            "runner.run()\n")
    import subprocess
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 20
    line = ""
    while "up" not in line and time.monotonic() < deadline:
        line = parent.stdout.readline()
    assert "[s] up" in line
    log = (tmp_path / "logs" / "s.log")
    children = [int(p) for p in os.listdir("/proc") if p.isdigit() and _parent_of(int(p)) == parent.pid]
    assert len(children) == 1 and os.getpgid(children[0]) == children[0] != os.getpgid(parent.pid)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while alive(children[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(children[0]), "the node outlived its killed runner"
    assert log.read_text().startswith("up")


def _parent_of(pid: int) -> int | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1])


def test_environment_layers_run_file_then_node_then_dds_defaults(tmp_path, monkeypatch):
    monkeypatch.setenv("X", "shell")
    monkeypatch.delenv("FASTDDS_DEFAULT_PROFILES_FILE", raising=False)
    run = make_run(NodeSpec("e", "env", env={"Y": "node"}, exit_ok=True), env={"X": "run", "Y": "run", "Z": "run"})
    env = node_process_environment(run, run.nodes[0])
    assert (env["X"], env["Y"], env["Z"]) == ("run", "node", "run")
    assert env["PYTHONUNBUFFERED"] == "1" and env["ROS_AUTOMATIC_DISCOVERY_RANGE"]
    assert env["FASTDDS_DEFAULT_PROFILES_FILE"].endswith("fastdds_shm.xml")
    runner = Runner(run, tmp_path, out=io.StringIO(), err=io.StringIO(), command_for=fake_command)
    assert runner.run() == 0
    assert runner.out.getvalue() == "[e] X run Y node Z run\n"


def test_screen_output_is_not_captured(tmp_path):
    spec = NodeSpec("dashboard", "finisher", output="screen", exit_ok=True)
    runner, out, _ = make_runner(make_run(spec), tmp_path)
    assert runner.run() == 0
    assert out.getvalue() == "" and not (tmp_path / "logs" / "dashboard.log").exists()
    assert "PYTHONUNBUFFERED" not in node_process_environment(make_run(spec), spec, base={})


def test_predrel_nodes_run_as_modules_of_this_interpreter():
    command = node_command(NodeSpec("replay", "replay_node"))
    assert command[:2] == [sys.executable, "-c"]
    assert "from predrel_ros.ros.nodes.replay_node import main" in command[2]


def test_other_packages_need_their_installed_executable():
    with pytest.raises(UserError, match=r"node x: package 'no_such_package' is not installed"):
        node_command(NodeSpec("x", "y", package="no_such_package"))


def test_print_shows_every_command(tmp_path):
    path = tmp_path / "p.run.yaml"
    path.write_text("env: {A: '1'}\nnodes: [{name: a, executable: echo_relay, namespace: ns, required: false,"
                    " parameters: {s: 'x y'}}]\n")
    text = format_commands(load_run_file(path))
    assert text.splitlines()[0] == "# ns/a (optional; output prefixed)"
    assert text.splitlines()[1].startswith(f"A=1 {sys.executable} -c ")
    assert text.splitlines()[1].endswith("--ros-args -r __node:=a -r __ns:=/ns -p 's:=\"x y\"'")
