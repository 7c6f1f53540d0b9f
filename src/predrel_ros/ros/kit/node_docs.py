"""The per-node topic and parameter tables of docs/nodes.md, generated from each node module's
`TOPICS` and `PARAMETERS` (so the documentation cannot drift from the code;
tests/ros/kit/test_node_docs.py fails when it does).

    python -m predrel_ros.ros.kit.node_docs docs/nodes.md          # rewrite the generated blocks
    python -m predrel_ros.ros.kit.node_docs --check docs/nodes.md  # exit 1 if they are out of date

The path defaults to `DOC` (docs/nodes.md, relative to the repository root).

A generated block sits between `<!-- BEGIN generated: NODE -->` and `<!-- END generated: NODE -->`;
add a node to `DOCUMENTED_NODES` and put an empty pair of markers where its tables belong. The params
file named is `config/<NODE_NAME>.yaml`, or the module's `PARAMS_FILE` where that name is taken.
"""
from __future__ import annotations

import argparse
import importlib
import re
import sys
from pathlib import Path
from typing import Sequence

from predrel_ros.ros.kit.parameter_specs import ParameterSpec
from predrel_ros.ros.kit.topic_specs import PUBLISHES, TopicSpec

#: the document holding the generated tables, relative to the repository root
DOC = Path("docs") / "nodes.md"

#: node modules (predrel_ros.ros.nodes.<name>) whose tables DOC holds
DOCUMENTED_NODES = ("replay_node", "degrade_node", "perception_node", "predicate_node", "reliability_node",
                    "action_node", "dashboard_node")

_BLOCK = re.compile(r"(<!-- BEGIN generated: (?P<name>\w+) -->\n)(?P<body>.*?)(<!-- END generated: (?P=name) -->)",
                    re.DOTALL)


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def topics_table(topics: Sequence[TopicSpec]) -> str:
    rows = ["| topic | type | direction | QoS | content |", "| --- | --- | --- | --- | --- |"]
    for topic in topics:
        direction = "pub" if topic.direction == PUBLISHES else "sub"
        when = f" (when {topic.condition})" if topic.condition else ""
        rows.append(f"| `{topic.name}` | {topic.type} | {direction} | {_cell(topic.qos)} | "
                    f"{_cell(topic.description)}{_cell(when)} |")
    return "\n".join(rows) + "\n"


def _default(spec: ParameterSpec) -> str:
    value = spec.default
    if isinstance(value, bool):
        return "`true`" if value else "`false`"
    if isinstance(value, str):
        return f"`{value}`" if value else '`""`'
    return f"`{value}`"


def parameters_table(parameters: Sequence[ParameterSpec]) -> str:
    rows = ["| parameter | type | default | allowed | runtime | meaning |", "| --- | --- | --- | --- | --- | --- |"]
    for spec in parameters:
        rows.append(f"| `{spec.name}` | {spec.type} | {_default(spec)} | {_cell(spec.allowed())} | "
                    f"{'yes' if spec.runtime else ''} | {_cell(spec.text)} |")
    return "\n".join(rows) + "\n"


def render(node: str) -> str:
    """The generated block of node module `node`: its topics and parameters tables."""
    module = importlib.import_module(f"predrel_ros.ros.nodes.{node}")
    return (f"Topics (names relative to the node's namespace):\n\n{topics_table(module.TOPICS)}\n"
            f"Parameters (`config/{getattr(module, 'PARAMS_FILE', module.NODE_NAME + '.yaml')}` lists them all "
            f"with their defaults):\n\n"
            f"{parameters_table(module.PARAMETERS)}")


def update(text: str, nodes: Sequence[str] = DOCUMENTED_NODES) -> str:
    """`text` with every generated block of `nodes` rewritten; ValueError when a node has no block."""
    missing = [node for node in nodes if f"<!-- BEGIN generated: {node} -->" not in text]
    if missing:
        raise ValueError(f"no generated block for {missing}: add '<!-- BEGIN generated: NODE -->' and "
                         f"'<!-- END generated: NODE -->' lines where the tables belong")

    def replace(match: re.Match) -> str:
        name = match.group("name")
        body = render(name) if name in nodes else match.group("body")
        return f"{match.group(1)}{body}{match.group(4)}"
    return _BLOCK.sub(replace, text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("doc", type=Path, nargs="?", default=DOC,
                        help=f"the document with the generated blocks (default: {DOC})")
    parser.add_argument("--check", action="store_true", help="exit 1 when the tables are out of date")
    args = parser.parse_args(argv)
    text = args.doc.read_text()
    try:
        updated = update(text)
    except ValueError as error:
        print(f"node_docs: error: {args.doc}: {error}", file=sys.stderr)
        return 1
    if args.check:
        if updated != text:
            print(f"{args.doc}: the node tables are out of date; run python -m predrel_ros.ros.kit.node_docs "
                  f"{args.doc}", file=sys.stderr)
            return 1
        return 0
    args.doc.write_text(updated)
    return 0


if __name__ == "__main__":
    sys.exit(main())
