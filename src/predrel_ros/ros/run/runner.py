"""The runner of `predrel run` (tools/cli/run.py, whose help says what a run does): a resolved run
file's nodes started as processes with their --ros-args and DDS environment, their output copied
(prefixed, log, screen), supervised until a node ends or fails the run, then stopped together.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from predrel_ros.core.errors import UserError
from predrel_ros.ros.run.processes import TOOL_MODULES, installed_executable, terminate_with_parent
from predrel_ros.ros.run.run_file import NodeSpec, RunFile

#: how often the runner looks at its processes
POLL_PERIOD_S = 0.05
#: output lines of a failed node shown with the failure
TAIL_LINES = 20


def node_command(spec: NodeSpec) -> list[str]:
    """The command that starts `spec`'s node process (without its --ros-args).

    predrel_ros nodes run as `python -c 'from predrel_ros.ros.nodes.<executable> import main'` with this
    interpreter, so a source checkout needs no rebuild after editing them (the diagnostic tools of
    `processes.TOOL_MODULES`, e.g. echo_relay, from their own module); other packages' nodes run as
    their installed lib/<package>/<executable>, as `ros2 run` would.
    """
    if spec.package == "predrel_ros":
        module = TOOL_MODULES.get(spec.executable, f"predrel_ros.ros.nodes.{spec.executable}")
        return [sys.executable, "-c", f"import sys; from {module} import main; sys.exit(main())"]
    try:
        return [str(installed_executable(spec.package, spec.executable))]
    except UserError as error:
        raise UserError(f"node {spec.label}: {error}") from None


def node_process_environment(run: RunFile, spec: NodeSpec, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of `spec`'s process: `base` (os.environ), the run file's env, the node's env,
    then the DDS defaults for whatever is still unset."""
    from predrel_ros.ros.run.dds import node_environment

    env = dict(os.environ if base is None else base)
    env.update(run.env)
    env.update(spec.env)
    if spec.output != "screen":
        env.setdefault("PYTHONUNBUFFERED", "1")  # lines appear when written, not when a buffer fills
        env.setdefault("RCUTILS_COLORIZED_OUTPUT", "0")
    return node_environment(env)


def _child_setup() -> None:
    """In the child before exec: its own process group (signals come from the runner only, once),
    and SIGTERM when the runner dies (nodes never outlive a killed runner)."""
    os.setpgid(0, 0)
    if sys.platform.startswith("linux"):
        terminate_with_parent()


def log_file_name(spec: NodeSpec) -> str:
    return spec.label.replace("/", "_") + ".log"


@dataclass
class NodeOutcome:
    label: str
    returncode: int | None
    failed: bool
    reason: str


class NodeProcess:
    """One running node: its process, the thread that copies its output, the last lines."""

    def __init__(self, spec: NodeSpec, command: list[str], env: dict[str, str], log_dir: Path,
                 out: TextIO, lock: threading.Lock) -> None:
        self.spec = spec
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self.log_path = None if spec.output == "screen" else log_dir / log_file_name(spec)
        self.stop_sent_at: float | None = None
        self.killed = False
        self._out = out
        self._lock = lock
        pipe = None if spec.output == "screen" else subprocess.PIPE
        self.process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=pipe,
                                        stderr=subprocess.STDOUT if pipe else None,
                                        preexec_fn=_child_setup)
        self._reader = None
        if pipe is not None:
            self._reader = threading.Thread(target=self._copy_output, name=f"output {spec.label}", daemon=True)
            self._reader.start()

    def _copy_output(self) -> None:
        prefix = f"[{self.spec.label}] "
        with open(self.log_path, "a", encoding="utf-8") as log:
            for raw in self.process.stdout:
                line = raw.decode("utf-8", errors="replace").rstrip("\n")
                log.write(line + "\n")
                log.flush()
                self.tail.append(line)
                if self.spec.output == "prefixed":
                    with self._lock:
                        self._out.write(prefix + line + "\n")
                        self._out.flush()

    def poll(self) -> int | None:
        return self.process.poll()

    def interrupt(self) -> None:
        if self.process.poll() is None and self.stop_sent_at is None:
            self.stop_sent_at = time.monotonic()
            self.process.send_signal(signal.SIGINT)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.killed = True
            self.process.kill()

    def finish_output(self, timeout_s: float = 2.0) -> None:
        if self._reader is not None:
            self._reader.join(timeout_s)


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"was killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"was killed by signal {-returncode}"
    return f"exited with code {returncode}"


class Runner:
    """Starts a resolved run file's nodes and supervises them until the run ends (`run()`).

    `command_for` and `env_for` choose each node's command and environment (tests give fake nodes).
    """

    def __init__(self, run: RunFile, log_dir: Path, out: TextIO = sys.stdout, err: TextIO = sys.stderr,
                 command_for: Callable[[NodeSpec], list[str]] = node_command,
                 env_for: Callable[[RunFile, NodeSpec], dict[str, str]] = node_process_environment,
                 shutdown_timeout_s: float | None = None) -> None:
        self.run_file = run
        self.log_dir = Path(log_dir)
        self.out = out
        self.err = err
        self.command_for = command_for
        self.env_for = env_for
        self.shutdown_timeout_s = run.shutdown_timeout_s if shutdown_timeout_s is None else shutdown_timeout_s
        self.processes: list[NodeProcess] = []
        self.outcomes: list[NodeOutcome] = []
        self._lock = threading.Lock()
        self._signals: list[int] = []

    def say(self, message: str) -> None:
        with self._lock:
            self.err.write(f"[run] {message}\n")
            self.err.flush()

    def request_stop(self, signum: int) -> None:
        """What the signal handlers call: the first request stops the run, a second kills."""
        self._signals.append(signum)

    def run(self) -> int:
        """Start every node, supervise, stop; returns the exit status of the run."""
        commands = [(spec, self.command_for(spec) + ["--ros-args", *spec.ros_arguments()],
                     self.env_for(self.run_file, spec)) for spec in self.run_file.nodes]
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.say(f"{self.run_file.path}: {len(commands)} nodes, logs in {self.log_dir}")
        status: int | None = None
        try:
            for spec, command, env in commands:
                self.processes.append(NodeProcess(spec, command, env, self.log_dir, self.out, self._lock))
            status = self._supervise()
        finally:
            shutdown_failed = self._shutdown()
        if status == 0 and shutdown_failed:
            status = 1
        return status if status is not None else 1

    def _supervise(self) -> int:
        """Wait until the run ends; returns 0 (a node finished the run), 1 (a node failed) or
        128 + signal (interrupted)."""
        reported: set[int] = set()
        while True:
            if self._signals:
                signum = self._signals[0]
                self.say(f"{signal.Signals(signum).name}: stopping {self._running_labels()}")
                return 128 + signum
            running = 0
            for index, node in enumerate(self.processes):
                code = node.poll()
                if code is None:
                    running += 1
                    continue
                if index in reported:
                    continue
                reported.add(index)
                spec = node.spec
                if code == 0 and spec.exit_ok:
                    self.outcomes.append(NodeOutcome(spec.label, code, False, "finished"))
                    return self._finish(spec)
                reason = describe_exit(code) if code != 0 else "exited (code 0) while the run was going on"
                self.outcomes.append(NodeOutcome(spec.label, code, spec.required, reason))
                if spec.required:
                    self._report_failure(node, reason)
                    return 1
                self.say(f"{spec.label} {reason} (not required: the run goes on)")
            if running == 0:
                self.say("every node has exited")
                return 0
            time.sleep(POLL_PERIOD_S)

    def _finish(self, spec: NodeSpec) -> int:
        """A node ended the run: the others drain for the run file's finish_grace_s (failing the
        run if a required one dies meanwhile, stopping early on a signal), then stop."""
        grace = self.run_file.finish_grace_s
        self.say(f"{spec.label} finished: stopping the other nodes" + (f" in {grace:g} s" if grace else ""))
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and not self._signals:
            for node in self.processes:
                code = node.poll()
                if code is not None and code != 0 and node.spec.required and node.spec is not spec:
                    reason = describe_exit(code)
                    self.outcomes.append(NodeOutcome(node.spec.label, code, True, reason))
                    self._report_failure(node, reason)
                    return 1
            time.sleep(POLL_PERIOD_S)
        return 0

    def _running_labels(self) -> str:
        labels = [node.spec.label for node in self.processes if node.poll() is None]
        return ", ".join(labels) if labels else "nothing (all exited)"

    def _report_failure(self, node: NodeProcess, reason: str) -> None:
        node.finish_output()
        lines = [f"node {node.spec.label} {reason}"]
        if node.tail:
            lines.append(f"its last {len(node.tail)} lines:")
            lines += [f"  | {line}" for line in node.tail]
        if node.log_path is not None:
            lines.append(f"full output: {node.log_path}")
        with self._lock:
            self.err.write("[run] " + "\n[run] ".join(lines) + "\n")
            self.err.flush()

    def _shutdown(self) -> bool:
        """Interrupt every node, kill the ones still running after the timeout; True when a node
        failed while stopping (non-zero exit, or had to be killed)."""
        for node in self.processes:
            node.interrupt()
        deadline = time.monotonic() + self.shutdown_timeout_s
        signals_seen = len(self._signals)
        while any(node.poll() is None for node in self.processes):
            if len(self._signals) > max(signals_seen, 1):
                self.say("second interrupt: killing every node now")
                break
            if time.monotonic() >= deadline:
                self.say(f"still running after {self.shutdown_timeout_s:g} s: {self._running_labels()}; killing")
                break
            time.sleep(POLL_PERIOD_S)
        for node in self.processes:
            node.kill()
        failed = False
        for node in self.processes:
            code = node.process.wait()
            node.finish_output()
            if node.stop_sent_at is None:
                continue  # it had exited before the shutdown; reported by _supervise
            if node.killed:
                self.outcomes.append(NodeOutcome(node.spec.label, code, True, "did not stop in time and was killed"))
                failed = True
            elif code not in (0, -signal.SIGINT):
                reason = describe_exit(code) + " while stopping"
                self.outcomes.append(NodeOutcome(node.spec.label, code, True, reason))
                self._report_failure(node, reason)
                failed = True
        return failed


def default_log_dir() -> Path:
    """ROS_LOG_DIR, else ~/.ros/log (as ROS nodes log), plus predrel_run_<local time>_<pid>."""
    base = os.environ.get("ROS_LOG_DIR") or str(Path(os.environ.get("ROS_HOME", Path.home() / ".ros")) / "log")
    return Path(base).expanduser() / time.strftime(f"predrel_run_%Y-%m-%d-%H-%M-%S_{os.getpid()}")


def install_signal_handlers(runner: Runner) -> dict[int, object]:
    """Route SIGINT/SIGTERM to `runner.request_stop`; returns the previous handlers."""
    previous = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        previous[signum] = signal.signal(signum, lambda number, frame: runner.request_stop(number))
    return previous


def restore_signal_handlers(previous: dict[int, object]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


def run_nodes(run: RunFile, log_dir: Path | None = None, out: TextIO = sys.stdout, err: TextIO = sys.stderr,
              shutdown_timeout_s: float | None = None) -> int:
    """Run `run` in this process's foreground with Ctrl-C/SIGTERM handling; returns the exit status."""
    runner = Runner(run, log_dir or default_log_dir(), out=out, err=err, shutdown_timeout_s=shutdown_timeout_s)
    previous = install_signal_handlers(runner)
    try:
        return runner.run()
    finally:
        restore_signal_handlers(previous)


def format_commands(run: RunFile) -> str:
    """The command line of every node, shell-quoted (for --print)."""
    import shlex

    lines = []
    for spec in run.nodes:
        command = node_command(spec) + ["--ros-args", *spec.ros_arguments()]
        flags = ", ".join(f for f, on in (("required", spec.required), ("exit_ok", spec.exit_ok)) if on)
        lines.append(f"# {spec.label} ({flags or 'optional'}; output {spec.output})")
        env = {**run.env, **spec.env}
        lines.append(" ".join([*(f"{k}={shlex.quote(v)}" for k, v in env.items()), *map(shlex.quote, command)]))
    return "\n".join(lines)
