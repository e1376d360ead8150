"""TLS through kazoo's own options, against a real ZooKeeper TLS listener that demands a client cert.

Certificates are made per run with the openssl command line (a CA, a server cert for 127.0.0.1 and a
client cert); ZooKeeper 3.9 reads PEM key and trust stores directly.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from zkstorm.errors import ZookeeperError
from zkstorm.sandbox.server import ZkServer, free_port
from zkstorm.sources.live import ReadOnlySession, TlsOptions


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _make_pki(base: Path) -> None:
    assert shutil.which("openssl"), "the TLS tests need the openssl command"
    (base / "san.cnf").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    for ca in ("ca", "other-ca"):
        _openssl(
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            f"{ca}.key",
            "-out",
            f"{ca}.pem",
            "-days",
            "2",
            "-subj",
            f"/CN=zkstorm-{ca}",
            cwd=base,
        )
    for name in ("server", "client"):
        _openssl(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            f"{name}.key",
            "-out",
            f"{name}.csr",
            "-subj",
            f"/CN={name}",
            cwd=base,
        )
        _openssl(
            "x509",
            "-req",
            "-in",
            f"{name}.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            f"{name}.crt",
            "-days",
            "2",
            "-extfile",
            "san.cnf",
            cwd=base,
        )
    (base / "server-keystore.pem").write_text((base / "server.key").read_text() + (base / "server.crt").read_text())


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ZkServer, int, Path]]:
    pki = tmp_path_factory.mktemp("pki")
    _make_pki(pki)
    secure = free_port()
    server = ZkServer(
        tmp_path_factory.mktemp("tls-zk"),
        extra_config={
            "secureClientPort": str(secure),
            "secureClientPortAddress": "127.0.0.1",
            "serverCnxnFactory": "org.apache.zookeeper.server.NettyServerCnxnFactory",
            "ssl.keyStore.location": str(pki / "server-keystore.pem"),
            "ssl.keyStore.type": "PEM",
            "ssl.trustStore.location": str(pki / "ca.pem"),
            "ssl.trustStore.type": "PEM",
            "ssl.clientAuth": "need",
        },
    )
    server.start()
    yield server, secure, pki
    server.stop()


def test_tls_with_ca_and_client_certificate(tls_server: tuple[ZkServer, int, Path]) -> None:
    _, port, pki = tls_server
    tls = TlsOptions(ca=str(pki / "ca.pem"), certfile=str(pki / "client.crt"), keyfile=str(pki / "client.key"))
    with ReadOnlySession(f"127.0.0.1:{port}", tls=tls, timeout=10) as session:
        assert "zookeeper" in session.get_children("/")


def test_tls_server_not_signed_by_our_ca_is_refused(tls_server: tuple[ZkServer, int, Path]) -> None:
    _, port, pki = tls_server
    tls = TlsOptions(ca=str(pki / "other-ca.pem"), certfile=str(pki / "client.crt"), keyfile=str(pki / "client.key"))
    started = time.monotonic()
    with pytest.raises(
        ZookeeperError,
        match=r"^cannot connect .*: TLS certificate not accepted \(unable to get local issuer certificate\)$",
    ):
        ReadOnlySession(f"127.0.0.1:{port}", tls=tls, timeout=10).connect()
    assert time.monotonic() - started < 5  # a certificate that does not verify is told at once, not in 10 s


def test_tls_without_a_client_certificate_is_refused_by_the_server(tls_server: tuple[ZkServer, int, Path]) -> None:
    _, port, pki = tls_server
    with pytest.raises(ZookeeperError, match="cannot connect"):
        ReadOnlySession(f"127.0.0.1:{port}", tls=TlsOptions(ca=str(pki / "ca.pem")), timeout=3).connect()


def test_four_letter_words_on_a_secure_client_port(tls_server: tuple[ZkServer, int, Path]) -> None:
    """``zk members`` speaks TLS to a secure client port, with the session's own CA and client certificate."""
    from tests.test_cli import run

    _, port, pki = tls_server
    tls = ["--tls-ca", str(pki / "ca.pem"), "--tls-cert", str(pki / "client.crt"), "--tls-key", str(pki / "client.key")]
    result = run("--zk", f"127.0.0.1:{port}", *tls, "zk", "members", "-f", "json", "--admin-port", "0")
    assert result.exit_code == 0, result.output
    (member,) = json.loads(result.stdout)
    assert (member["port"], member["mode"], member["source"], member["server_id"]) == (port, "leader", "4lw", 1)
    assert member["watch_count"] is not None  # mntr, over TLS
    plain = run("--zk", f"127.0.0.1:{port}", "--timeout", "2", "zk", "members", "-f", "json", "--admin-port", "0")
    assert json.loads(plain.stdout)[0]["mode"] == "unreachable"  # no TLS: the port answers nothing readable
