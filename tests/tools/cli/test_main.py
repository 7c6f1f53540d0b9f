"""The `predrel` command: one module per subcommand, every help page."""
import importlib

import pytest

from predrel_ros.tools.cli import main as cli


@pytest.mark.parametrize("name", sorted(cli.COMMANDS))
def test_each_subcommand_is_a_module_of_its_own_with_its_help(name, capsys):
    module = importlib.import_module(cli.command_module(name))
    assert callable(module.add_arguments) and callable(module.main) and module.EXAMPLES.startswith("examples:")
    with pytest.raises(SystemExit) as exit_:
        cli.main([name, "--help"])
    assert exit_.value.code == 0 and f"usage: predrel {name}" in capsys.readouterr().out


def test_the_overview_names_every_subcommand(capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and all(name in out for name in cli.COMMANDS)
