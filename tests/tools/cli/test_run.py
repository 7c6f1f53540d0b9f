import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.tools.cli import run


def test_main_refuses_a_bad_timeout(tmp_path):
    import argparse
    path = tmp_path / "p.run.yaml"
    path.write_text("nodes: [{name: a, executable: echo_relay}]\n")
    args = argparse.Namespace(run_file=str(path), assignments=[], log_dir=None, shutdown_timeout=0.0,
                              print_only=False, namespace="")
    with pytest.raises(UserError, match=r"--shutdown-timeout must lie in \(0, 600\]"):
        run.main(args)
