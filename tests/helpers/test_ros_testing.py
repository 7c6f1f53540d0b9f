import pytest
from ros_testing import PrivateDomain


def test_private_domains_are_distinct_until_released(tmp_path):
    first = PrivateDomain(tmp_path, range(1, 4))
    second = PrivateDomain(tmp_path, range(1, 4))
    third = PrivateDomain(tmp_path, range(1, 4))
    assert len({first.domain_id, second.domain_id, third.domain_id}) == 3
    with pytest.raises(RuntimeError, match="all ROS domain ids 1..3 are held"):
        PrivateDomain(tmp_path, range(1, 4))
    taken = second.domain_id
    second.release()
    with PrivateDomain(tmp_path, range(1, 4)) as again:
        assert again.domain_id == taken
    first.release()
    third.release()


def test_this_session_holds_its_domain(tmp_path):
    import os
    domain = int(os.environ["ROS_DOMAIN_ID"])
    assert domain != 0
    with PrivateDomain() as other:  # the session's domain is locked, so another one is handed out
        assert other.domain_id != domain
