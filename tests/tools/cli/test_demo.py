import argparse
from pathlib import Path

import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.tools.cli import demo


@pytest.mark.parametrize("kinds, frames, rate, message", [
    ("fog", 60, 0.0, r"--kinds must name some of"),
    ("", 60, 0.0, r"--kinds must name some of"),
    ("blur", 10, 0.0, r"--frames must be at least 24"),
    ("blur", 60, -1.0, r"--rate must be >= 0"),
])
def test_bad_options_are_refused(kinds, frames, rate, message):
    args = argparse.Namespace(kinds=kinds, frames=frames, rate=rate, model="", out=Path("x"), cache_dir=None,
                              regenerate=False, display="lines")
    with pytest.raises(UserError, match=message):
        demo.main(args)
