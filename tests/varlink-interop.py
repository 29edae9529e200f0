#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""An independent varlink client, written from the specification
(https://varlink.org/Method-Call) with the standard library only, against
the C server (tests/test-varlink-interop-server.c serving io.damon.perfd).

usage: varlink-interop.py SERVER-BINARY IDL-FILE
"""

import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import traceback

TIMEOUT = 10.0


class Connection:
    """One varlink connection: JSON objects, each terminated by a NUL byte."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(TIMEOUT)
        self.sock.connect(path)
        self.buffer = b""

    def close(self):
        self.sock.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, method, parameters=None, **flags):
        call = {"method": method}
        if parameters is not None:
            call["parameters"] = parameters
        call.update(flags)
        self.send_raw(json.dumps(call).encode("utf-8") + b"\0")

    def receive(self):
        """The next message, or None if the server closed the connection."""
        while b"\0" not in self.buffer:
            data = self.sock.recv(65536)
            if not data:
                if self.buffer:
                    raise AssertionError("connection closed inside a message: %r" % self.buffer[:80])
                return None
            self.buffer += data
        message, _, self.buffer = self.buffer.partition(b"\0")
        reply = json.loads(message.decode("utf-8"))
        check_reply_shape(reply)
        return reply

    def call(self, method, parameters=None, **flags):
        self.send(method, parameters, **flags)
        reply = self.receive()
        if reply is None:
            raise AssertionError("no reply to %s: connection closed" % method)
        return reply


def check_reply_shape(reply):
    """A reply is an object with only parameters/continues/error, of the right types."""
    assert isinstance(reply, dict), reply
    assert set(reply) <= {"parameters", "continues", "error"}, reply
    if "parameters" in reply:
        assert isinstance(reply["parameters"], dict), reply
    if "continues" in reply:
        assert isinstance(reply["continues"], bool), reply
    if "error" in reply:
        assert isinstance(reply["error"], str) and "." in reply["error"], reply
        assert not reply.get("continues"), reply


def expect_error(reply, name, parameters=None):
    assert reply.get("error") == name, reply
    if parameters is not None:
        assert reply.get("parameters", {}) == parameters, reply


class Tests:
    def __init__(self, path, idl_text):
        self.path = path
        self.idl_text = idl_text

    def connect(self):
        return Connection(self.path)

    def test_get_info(self):
        c = self.connect()
        reply = c.call("org.varlink.service.GetInfo")
        p = reply["parameters"]
        assert "error" not in reply and "continues" not in reply, reply
        assert p["vendor"] == "damon-perfd" and p["product"] == "damon-perfd", p
        assert isinstance(p["version"], str) and p["version"], p
        assert isinstance(p["url"], str), p
        assert p["interfaces"] == ["org.varlink.service", "io.damon.perfd"], p
        c.close()

    def test_interface_description_is_verbatim(self):
        c = self.connect()
        reply = c.call("org.varlink.service.GetInterfaceDescription", {"interface": "io.damon.perfd"})
        assert reply["parameters"]["description"] == self.idl_text, "description differs from the .varlink file"
        reply = c.call("org.varlink.service.GetInterfaceDescription", {"interface": "org.varlink.service"})
        description = reply["parameters"]["description"]
        assert "interface org.varlink.service" in description, description
        assert "error ExpectedMore ()" in description, description
        reply = c.call("org.varlink.service.GetInterfaceDescription", {"interface": "org.nowhere"})
        expect_error(reply, "org.varlink.service.InterfaceNotFound", {"interface": "org.nowhere"})
        c.close()

    def test_enum_values_lowercase(self):
        """Enum values are lowercase snake_case, as systemd's interfaces have
        them: strict clients (the varlink Go library) refuse capitals."""
        text = "\n".join(line.split("#", 1)[0] for line in self.idl_text.splitlines())
        enums = [group for group in re.findall(r"\(([^():]*)\)", text) if group.strip()]
        assert len(enums) >= 4, enums       # CPUState, Target.kind, Event.kind, role
        for group in enums:
            for value in (v.strip() for v in group.split(",")):
                assert re.fullmatch(r"[a-z][a-z0-9]*(_[a-z0-9]+)*", value), "enum value %r" % value

    def test_standard_errors(self):
        c = self.connect()
        expect_error(c.call("io.damon.perfd.Nope"), "org.varlink.service.MethodNotFound",
                     {"method": "io.damon.perfd.Nope"})
        expect_error(c.call("org.nowhere.Nope"), "org.varlink.service.InterfaceNotFound",
                     {"interface": "org.nowhere"})
        expect_error(c.call("io.damon.perfd.GetRegions", {"limit": "ten"}),
                     "org.varlink.service.InvalidParameter", {"parameter": "limit"})
        expect_error(c.call("io.damon.perfd.GetRegions", {"bogus": 1}),
                     "org.varlink.service.InvalidParameter", {"parameter": "bogus"})
        expect_error(c.call("org.varlink.service.GetInterfaceDescription", {}),
                     "org.varlink.service.InvalidParameter", {"parameter": "interface"})
        expect_error(c.call("io.damon.perfd.Monitor"), "org.varlink.service.ExpectedMore")
        c.close()

    def test_interface_error(self):
        c = self.connect()
        expect_error(c.call("io.damon.perfd.GetRegions", {"target": 999}), "io.damon.perfd.NoSuchTarget",
                     {"target": 999})
        reply = c.call("io.damon.perfd.GetRegions", {"target": None, "limit": 5})
        assert "error" not in reply, reply
        assert isinstance(reply["parameters"]["regions"], list), reply
        c.close()

    def test_reply_shapes(self):
        c = self.connect()
        stats = c.call("io.damon.perfd.GetStats", None)["parameters"]
        for key in ("source", "uptime_usec", "sample_rate", "totals", "cpus"):
            assert key in stats, stats
        assert isinstance(stats["sample_rate"], float), stats
        assert isinstance(stats["totals"]["in_flight"], int), stats
        cpus = c.call("io.damon.perfd.GetCPUs", {})["parameters"]
        assert cpus == {"cpus": []}, cpus
        damon = c.call("io.damon.perfd.GetDamonView", {})["parameters"]
        assert damon["role"] in ("owned", "attached", "observe_only", "off"), damon
        reply = c.call("io.damon.perfd.Reload")
        if os.geteuid() == 0:
            assert reply == {"parameters": {}} or reply == {}, reply
        else:
            expect_error(reply, "org.varlink.service.PermissionDenied")
        c.close()

    def test_pipelining(self):
        c = self.connect()
        calls = [
            {"method": "org.varlink.service.GetInfo"},
            {"method": "io.damon.perfd.GetRegions", "parameters": {"target": 999}},
            {"method": "io.damon.perfd.GetTargets", "oneway": True},
            {"method": "io.damon.perfd.GetCPUs", "parameters": None},
        ]
        c.send_raw(b"".join(json.dumps(call).encode() + b"\0" for call in calls))
        first, second, third = c.receive(), c.receive(), c.receive()
        assert first["parameters"]["vendor"] == "damon-perfd", first
        expect_error(second, "io.damon.perfd.NoSuchTarget")
        assert third == {"parameters": {"cpus": []}}, third      # the oneway call got no reply
        c.sock.settimeout(0.3)
        try:
            extra = c.sock.recv(1)
            assert False, "unexpected data after the last reply: %r" % extra
        except socket.timeout:
            pass
        c.close()

    def test_more(self):
        c = self.connect()
        c.send("io.damon.perfd.Monitor", {"samples": False}, more=True)
        events = []
        while True:
            reply = c.receive()
            assert reply is not None, "closed during Monitor"
            assert "error" not in reply, reply
            events.append(reply["parameters"]["event"])
            if not reply.get("continues"):
                break
            assert reply["continues"] is True, reply
        assert len(events) == 3, events
        assert [e["cpu"] for e in events] == [1, 2, 3], events
        assert all(e["kind"] == "state_change" for e in events), events
        # the connection is free for the next call
        assert c.call("io.damon.perfd.GetCPUs")["parameters"] == {"cpus": []}
        c.close()

    def test_more_then_hang_up(self):
        c = self.connect()
        c.send("io.damon.perfd.Monitor", {}, more=True)
        reply = c.receive()
        assert reply["continues"] is True, reply
        c.close()        # a client no longer interested simply closes
        c = self.connect()
        assert c.call("org.varlink.service.GetInfo")["parameters"]["product"] == "damon-perfd"
        c.close()

    def test_protocol_errors_close(self):
        for bad in (b'{"method": 5}\0', b'{"method": "io.damon.perfd.GetStats", "x": 1}\0',
                    b'{"method": "io.damon.perfd.GetStats", "oneway": true, "more": true}\0',
                    b'[]\0', b'{"method": "io.damon.perfd.GetStats", "method": "io.damon.perfd.GetCPUs"}\0'):
            c = self.connect()
            c.send_raw(bad)
            assert c.receive() is None, "server answered %r instead of closing" % bad
            c.close()

    def test_split_message(self):
        c = self.connect()
        data = json.dumps({"method": "org.varlink.service.GetInfo"}).encode() + b"\0"
        for i in range(len(data)):
            c.send_raw(data[i:i + 1])
        assert c.receive()["parameters"]["vendor"] == "damon-perfd"
        c.close()


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    server_binary, idl_file = sys.argv[1], sys.argv[2]
    with open(idl_file, "rb") as f:
        idl_text = f.read().decode("utf-8")

    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="dp-varlink-interop-") as tmp:
        path = os.path.join(tmp, "io.damon.perfd")
        server = subprocess.Popen([server_binary, path], stdout=subprocess.PIPE)
        try:
            line = server.stdout.readline()
            if line.strip() != b"READY":
                print("server did not start (%r)" % line)
                return 1
            tests = Tests(path, idl_text)
            for name in sorted(n for n in dir(tests) if n.startswith("test_")):
                try:
                    getattr(tests, name)()
                    print("PASS", name)
                    passed += 1
                except Exception:
                    print("FAIL", name)
                    traceback.print_exc(file=sys.stdout)
                    failed += 1
            if server.poll() is not None:
                print("FAIL server exited with", server.returncode)
                failed += 1
        finally:
            server.terminate()
            try:
                code = server.wait(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                server.kill()
                code = None
            if code != 0:
                print("FAIL server did not stop cleanly:", code)
                failed += 1
            if os.path.exists(path):
                print("FAIL the server left its socket file behind")
                failed += 1

    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
