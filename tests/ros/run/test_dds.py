import xml.etree.ElementTree as ET

from predrel_ros.ros.run import dds

NS = {"dds": "http://www.eprosima.com"}


def test_shipped_profile_uses_shared_memory_and_loopback_udp():
    root = ET.parse(dds.shipped_profile()).getroot()
    descriptors = {d.findtext("dds:transport_id", namespaces=NS): d
                   for d in root.iterfind(".//dds:transport_descriptor", NS)}
    kinds = {d.findtext("dds:type", namespaces=NS) for d in descriptors.values()}
    assert kinds == {"SHM", "UDPv4"}
    shm = next(d for d in descriptors.values() if d.findtext("dds:type", namespaces=NS) == "SHM")
    assert int(shm.findtext("dds:segment_size", namespaces=NS)) >= 16 * 2**20  # several 1280x720 frames
    udp = next(d for d in descriptors.values() if d.findtext("dds:type", namespaces=NS) == "UDPv4")
    assert [a.text for a in udp.iterfind("dds:interfaceWhiteList/dds:address", NS)] == ["127.0.0.1"]
    participant = root.find(".//dds:participant", NS)
    assert participant.get("is_default_profile") == "true"
    assert participant.findtext(".//dds:useBuiltinTransports", namespaces=NS) == "false"
    used = [t.text for t in participant.iterfind(".//dds:userTransports/dds:transport_id", NS)]
    assert sorted(used) == sorted(descriptors)


def test_node_environment_adds_local_defaults():
    env = dds.node_environment({"PATH": "/bin"})
    assert env["PATH"] == "/bin"
    assert env[dds.DISCOVERY_VARIABLE] == "LOCALHOST"
    assert env[dds.PROFILE_VARIABLE] == str(dds.shipped_profile())


def test_node_environment_keeps_a_robots_own_settings():
    robot = {dds.DISCOVERY_VARIABLE: "SUBNET", dds.PROFILE_VARIABLE: "/etc/robot/fastdds.xml"}
    assert dds.node_environment(robot) == robot
