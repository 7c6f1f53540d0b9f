"""Start the nodes of a run file, each in its own process, and stop them together.

Every node gets the DDS defaults of this machine (shared-memory Fast DDS profile, localhost
discovery; `nodes.dds`, overridable from the shell or the run file's env), its name, namespace,
params files, inline parameters and remappings as `--ros-args`. Output per node:
  prefixed  lines on this terminal as `[namespace/name] ...`, and in LOG_DIR/<namespace_name>.log
  screen    the node writes to this terminal directly (a live display such as the dashboard)
  log       only in the log file; its last lines are shown when the node fails
Ctrl-C or SIGTERM interrupts every node (SIGINT, as ros2 launch does) and kills those still running
after the run file's shutdown_timeout_s; a second Ctrl-C kills at once. The run ends when a node
marked exit_ok exits with 0 (e.g. a replay that played its bag), or fails when a required node
exits otherwise: exit status 1, naming the node. Interrupted runs exit with 128 + the signal number.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from predrel_ros.core.errors import UserError

EXAMPLES = """examples:
  predrel run demo                                  config/demo.run.yaml (what make demo starts)
  predrel run replay_eval bag:=data/controlled/bags/ep0000_insert schedule:=blur:3
  predrel run perception image:=/camera/color/image_raw
  predrel run my_graph.run.yaml --log-dir /tmp/run  a run file of your own
  predrel run demo --print                          the commands, without starting anything
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_file", metavar="RUN_FILE",
                        help="a run file (YAML), or the name of one in the package's config/ folder "
                             "(demo, replay_eval, perception)")
    parser.add_argument("assignments", nargs="*", metavar="NAME:=VALUE",
                        help="values of the run file's arguments, as for ros2 launch")
    parser.add_argument("--namespace", default="",
                        help="a namespace put in front of every node's (the graph of one robot, e.g. robot1)")
    parser.add_argument("--log-dir", type=Path, default=None,
                        help="folder of the per-node logs (default: $ROS_LOG_DIR or ~/.ros/log, "
                             "/predrel_run_<time>_<pid>)")
    parser.add_argument("--shutdown-timeout", type=float, default=None, metavar="S",
                        help="seconds between SIGINT and SIGKILL when stopping (default: the run file's, else 10)")
    parser.add_argument("--print", action="store_true", dest="print_only",
                        help="print the arguments and every node's command line, start nothing")


def main(args: argparse.Namespace) -> int:
    from predrel_ros.ros.run.run_file import load_run_file, parse_assignments, resolve_run_file
    from predrel_ros.ros.run.runner import format_commands, run_nodes

    path = resolve_run_file(args.run_file)
    run = load_run_file(path, parse_assignments(args.assignments), namespace=args.namespace)
    if args.shutdown_timeout is not None and not 0 < args.shutdown_timeout <= 600:
        raise UserError(f"--shutdown-timeout must lie in (0, 600] seconds, got {args.shutdown_timeout}")
    if args.print_only:
        print(f"# {path}" + (f": {run.description}" if run.description else ""))
        for argument in run.arguments:
            print(f"# argument {argument.name} (default {argument.default!r}): {argument.description}")
        print(format_commands(run))
        return 0
    return run_nodes(run, args.log_dir, shutdown_timeout_s=args.shutdown_timeout)
