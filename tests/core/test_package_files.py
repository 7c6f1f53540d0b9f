from pathlib import Path

import pytest

from predrel_ros.core.errors import UserError
from predrel_ros.core.package_files import config_file, data_dirs, package_file

CHECKOUT = Path(__file__).resolve().parents[2]


def test_the_source_checkout_comes_first():
    assert data_dirs("config")[0] == CHECKOUT / "config"
    assert config_file("fastdds_shm.xml") == CHECKOUT / "config" / "fastdds_shm.xml"


def test_a_missing_file_lists_where_it_looked():
    with pytest.raises(UserError, match=rf"launch/nope\.py was not found \(looked in {CHECKOUT}/launch/nope\.py"):
        package_file("launch", "nope.py")
