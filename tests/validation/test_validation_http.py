"""Validating over HTTP against a real local server (127.0.0.1 only), and the
site's own sitemaps in-process through the Django test client."""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import io
import ipaddress
import json
import socket
import ssl
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.http import HttpRequest, HttpResponse
from django.test import override_settings
from django.urls import include, path

from django_sitemaps_plus import http, protocol, register
from django_sitemaps_plus.fetch import (
    CHUNK_SIZE,
    MAX_REDIRECTS,
    FetchError,
    HttpFetcher,
    SiteFetcher,
    _internal_kind,
    named_hosts,
)
from django_sitemaps_plus.validation import (
    UnreadableTarget,
    assert_valid_sitemap,
    validate,
    validate_site,
)
from tests.testapp.models import Article
from tests.utils import QuietHandler, http_server, unavailable
from tests.validation.test_validation_command import run

XML = "application/xml; charset=utf-8"
Route = tuple[int, dict[str, str], bytes]


def urlset(*locs: str) -> bytes:
    entries = "".join(f"<url><loc>{loc}</loc></url>" for loc in locs)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{protocol.SITEMAP_NS}">'
        f"{entries}</urlset>\n"
    ).encode()


def index(*locs: str) -> bytes:
    entries = "".join(f"<sitemap><loc>{loc}</loc></sitemap>" for loc in locs)
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="{protocol.SITEMAP_NS}">'
        f"{entries}</sitemapindex>\n"
    ).encode()


class Server:
    """A real HTTP server on 127.0.0.1 serving fixed responses by path."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        #: path → seconds to wait before each CHUNK_SIZE piece of the body.
        self.trickle: dict[str, float] = {}
        #: Every path asked for, in order, and the Host header of each.
        self.requests: list[str] = []
        self.hosts: list[str] = []
        routes, trickle, requests, hosts = self.routes, self.trickle, self.requests, self.hosts

        #: path → how its body breaks off after half of it: "stall" (until the
        #: test ends), "close" (a short body) or "reset" (TCP reset).
        self.broken: dict[str, str] = {}
        self.released = threading.Event()
        broken, released = self.broken, self.released

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                requests.append(self.path)
                hosts.append(self.headers.get("Host", ""))
                if self.path == "/slow.xml":
                    time.sleep(1.5)
                status, headers, body = routes.get(self.path, (404, {}, b"not found"))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if self.path in broken:
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    if broken[self.path] == "stall":
                        released.wait(30)
                    elif broken[self.path] == "reset":
                        # Linger 0: closing sends RST instead of FIN.
                        self.connection.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                        )
                        self.connection.close()
                        self.wfile = io.BytesIO()  # (nothing left to flush)
                    return
                # The validator stops reading at the size limit: a closed pipe is expected.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    if self.path not in trickle:
                        self.wfile.write(body)
                        return
                    for start in range(0, len(body), CHUNK_SIZE):
                        time.sleep(trickle[self.path])
                        self.wfile.write(body[start : start + CHUNK_SIZE])
                        self.wfile.flush()

        self.handler = Handler
        self.base = ""

    def add(self, path: str, body: bytes, *, status: int = 200, **headers: str) -> str:
        normalized = {name.replace("_", "-"): value for name, value in headers.items()}
        normalized.setdefault("Content-Type", XML)
        self.routes[path] = (status, normalized, body)
        return self.base + path


@pytest.fixture(autouse=True)
def _no_proxy_for_local_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    """The command fetches through the environment's proxies, if any: never
    for the test servers (urllib reads no_proxy at each request)."""
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.setenv(name, "127.0.0.1,localhost,.invalid")


def serving() -> Iterator[Server]:
    instance = Server()
    with http_server(instance.handler) as base:
        instance.base = base
        try:
            yield instance
        finally:
            instance.released.set()


server = pytest.fixture(serving, name="server")
#: A second server: another origin (another port) on 127.0.0.1.
other = pytest.fixture(serving, name="other")


def local_fetcher(**options: float) -> HttpFetcher:
    """No proxy, and the test servers' own host allowed (it is loopback)."""
    return HttpFetcher(use_env_proxies=False, allow_hosts=["127.0.0.1"], **options)  # type: ignore[arg-type]


def check(url: str, **options: object):  # type: ignore[no-untyped-def]
    return validate(url, fetcher=local_fetcher(timeout=5), **options)  # type: ignore[arg-type]


class TestOverHttp:
    def test_index_is_followed_to_every_sitemap(self, server):
        b = server.base
        server.add("/sitemap.xml", index(f"{b}/s1.xml", f"{b}/s2.xml.gz"))
        server.add("/s1.xml", urlset(f"{b}/a"))
        server.add(
            "/s2.xml.gz", gzip.compress(urlset(f"{b}/b", f"{b}/b")), Content_Type="application/gzip"
        )
        report = check(f"{b}/sitemap.xml")
        assert [f.target for f in report.files] == [
            f"{b}/sitemap.xml",
            f"{b}/s1.xml",
            f"{b}/s2.xml.gz",
        ]
        assert [f.kind for f in report.files] == ["sitemapindex", "urlset", "urlset"]
        assert report.rule_ids() == {"SM313"}
        assert report.files[2].findings[0].url == f"{b}/b"

    def test_no_follow(self, server):
        server.add("/sitemap.xml", index(f"{server.base}/s1.xml"))
        report = check(f"{server.base}/sitemap.xml", follow=False)
        assert len(report.files) == 1

    def test_children_off_host_or_outside_directory_are_reported_not_fetched(self, server):
        b = server.base
        server.add("/dir/sitemap.xml", index("https://elsewhere.example/s.xml", f"{b}/other/s.xml"))
        report = check(f"{b}/dir/sitemap.xml")
        assert len(report.files) == 1
        assert report.rule_ids() == {"SM310", "SM312"}

    def test_missing_child_and_nested_index_and_loop(self, server):
        b = server.base
        server.add("/sitemap.xml", index(f"{b}/missing.xml", f"{b}/nested.xml"))
        server.add("/nested.xml", index(f"{b}/sitemap.xml", f"{b}/s.xml"))
        server.add("/s.xml", urlset(f"{b}/a"))
        report = check(f"{b}/sitemap.xml")
        top = report.files[0]
        assert top.rule_ids() == {"SM601", "SM602"}
        assert next(f for f in top.findings if f.rule.id == "SM601").url == f"{b}/missing.xml"
        nested = next(f for f in report.files if f.target.endswith("/nested.xml"))
        assert nested.rule_ids() == {"SM602"}  # lists the top index: a loop, not re-fetched
        assert [f.target for f in report.files].count(f"{b}/sitemap.xml") == 1

    def test_redirect_and_content_type_are_reported(self, server):
        b = server.base
        server.add("/old.xml", b"", status=301, Location="/sitemap.xml")
        server.add("/sitemap.xml", urlset(f"{b}/a"), Content_Type="text/html")
        report = check(f"{b}/old.xml")
        assert report.rule_ids() == {"SM701", "SM702"}
        assert report.files[0].kind == "urlset"

    def test_top_level_failures_are_unreadable_targets(self, server):
        with pytest.raises(UnreadableTarget, match="404"):
            check(f"{server.base}/nothing.xml")
        server.add("/slow.xml", urlset(f"{server.base}/a"))
        with pytest.raises(FetchError, match="timed out"):
            local_fetcher(timeout=0.3).fetch(f"{server.base}/slow.xml")

    def test_index_nesting_is_bounded(self, server):
        b = server.base
        depth = protocol.MAX_INDEX_DEPTH
        for level in range(1, depth + 2):
            server.add(f"/index-{level}.xml", index(f"{b}/index-{level + 1}.xml"))
        server.add(f"/index-{depth + 2}.xml", urlset(f"{b}/a"))
        report = check(f"{b}/index-1.xml")
        assert [f.target for f in report.files] == [
            f"{b}/index-{level}.xml" for level in range(1, depth + 1)
        ]

    def test_redirects_are_followed_at_most_max_redirects_times(self, server):
        b = server.base
        for hop in range(MAX_REDIRECTS + 1):
            server.add(f"/hop-{hop}.xml", b"", status=302, Location=f"/hop-{hop + 1}.xml")
        server.add(f"/hop-{MAX_REDIRECTS + 1}.xml", urlset(f"{b}/a"))
        report = check(f"{b}/hop-1.xml")  # MAX_REDIRECTS hops: followed, each reported
        assert [f.rule.id for f in report.findings] == ["SM701"] * MAX_REDIRECTS
        assert report.files[0].kind == "urlset"
        with pytest.raises(UnreadableTarget, match=f"more than {MAX_REDIRECTS} redirects"):
            check(f"{b}/hop-0.xml")

    def test_a_response_read_too_slowly_is_abandoned(self, server):
        padding = b"<!--" + b" " * CHUNK_SIZE + b"-->"
        body = urlset(f"{server.base}/a").replace(b"</urlset>", padding * 8 + b"</urlset>")
        url = server.add("/trickle.xml", body)
        server.trickle["/trickle.xml"] = 0.05
        # Each read is quick (no socket timeout); the whole takes about half a second.
        fetcher = local_fetcher(timeout=5, total_timeout=0.2)
        with pytest.raises(UnreadableTarget, match="took longer than allowed"):
            validate(url, fetcher=fetcher)
        assert validate(url, fetcher=local_fetcher(timeout=5)).findings == []

    @pytest.mark.parametrize(
        "content_type", ["application/xml", "application/vnd.example+xml; charset=utf-8"]
    )
    def test_xml_content_types_are_accepted(self, server, content_type):
        url = server.add("/sitemap.xml", urlset(f"{server.base}/a"), Content_Type=content_type)
        assert check(url).findings == []

    def test_size_cap_applies_over_http(self, server):
        big = urlset(f"{server.base}/a").replace(
            b"</urlset>", b"<!-- padding -->" * (protocol.MAX_FILE_BYTES // 16 + 10) + b"</urlset>"
        )
        server.add("/big.xml.gz", gzip.compress(big, 1), Content_Type="application/gzip")
        report = check(f"{server.base}/big.xml.gz")
        assert report.rule_ids() == {"SM503"}


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every address a connection is opened to (the real connection still opens)."""
    opened: list[tuple[str, int]] = []
    create_connection = socket.create_connection

    def spy(address: tuple[str, int], *args: object, **kwargs: object) -> socket.socket:
        opened.append(address)
        return create_connection(address, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "create_connection", spy)
    return opened


def run_json(*args: str) -> tuple[int, dict[str, object], str]:
    code, out, err = run(*args, "--format", "json")
    return code, json.loads(out) if out else {}, err


def findings(report: dict[str, object], rule_id: str) -> list[dict[str, object]]:
    return [
        finding
        for file in report["files"]  # type: ignore[attr-defined]
        for finding in file["findings"]
        if finding["rule"] == rule_id
    ]


class TestRedirectsStayOnTheOrigin:
    """A redirect is followed only within the origin asked for; one elsewhere
    is a finding (SM703), and the other server is never asked."""

    def test_a_child_redirected_to_another_server_is_not_fetched(self, server, other):
        b = server.base
        server.add("/sitemap.xml", index(f"{b}/child.xml", f"{b}/ok.xml"))
        server.add("/child.xml", b"", status=302, Location=f"{other.base}/child.xml")
        server.add("/ok.xml", urlset(f"{b}/a"))
        other.add("/child.xml", urlset(f"{other.base}/a"))
        code, report, _ = run_json(f"{b}/sitemap.xml")
        assert other.requests == []
        assert code == 1  # SM703 is an error
        (finding,) = findings(report, "SM703")
        assert finding["url"] == f"{other.base}/child.xml"
        assert finding["severity"] == "error"
        files = report["files"]
        assert [f["target"] for f in files] == [  # type: ignore[attr-defined]
            f"{b}/sitemap.xml",
            f"{b}/child.xml",
            f"{b}/ok.xml",
        ]
        assert files[1]["kind"] is None  # type: ignore[index]
        assert server.requests == ["/sitemap.xml", "/child.xml", "/ok.xml"]

    def test_another_host_name_of_the_same_server_is_another_origin(self, server):
        b = server.base
        port = b.rsplit(":", 1)[1]
        server.add("/sitemap.xml", b"", status=301, Location=f"http://localhost:{port}/sitemap.xml")
        code, report, _ = run_json(f"{b}/sitemap.xml")
        assert server.requests == ["/sitemap.xml"]  # asked once, by its first name
        assert code == 1
        assert [f["rule"] for f in findings(report, "SM703")] == ["SM703"]

    def test_hops_within_the_origin_are_followed_up_to_the_one_leaving_it(self, server, other):
        server.add("/old.xml", b"", status=301, Location="/older.xml")
        server.add("/older.xml", b"", status=307, Location=f"{other.base}/sitemap.xml")
        report = check(f"{server.base}/old.xml")
        assert [f.rule.id for f in report.findings] == ["SM701", "SM703"]
        assert server.requests == ["/old.xml", "/older.xml"]
        assert other.requests == []

    def test_a_redirect_to_the_metadata_address_is_not_followed(self, server, connections):
        metadata = "http://169.254.169.254/latest/meta-data/"
        server.add("/sitemap.xml", b"", status=302, Location=metadata)
        report = check(f"{server.base}/sitemap.xml")
        assert report.rule_ids() == {"SM703"}
        assert [address[0] for address in connections] == ["127.0.0.1"]


class TestPrivateAddresses:
    """Hosts resolving to private, loopback or link-local addresses are refused
    before any connection, unless named (the URL's own host, --allow-host)."""

    def test_an_unnamed_loopback_host_is_refused_before_connecting(self, server, connections):
        port = server.base.rsplit(":", 1)[1]
        fetcher = HttpFetcher(use_env_proxies=False, allow_hosts=["localhost"])
        with pytest.raises(FetchError, match=r"refused .*127\.0\.0\.2, a loopback address"):
            fetcher.fetch(f"http://127.0.0.2:{port}/sitemap.xml")
        with pytest.raises(FetchError, match="a link-local address"):
            fetcher.fetch("http://169.254.169.254/latest/meta-data/")
        with pytest.raises(FetchError, match="a private address"):
            fetcher.fetch("http://10.1.2.3/sitemap.xml")
        assert connections == []
        assert server.requests == []

    def test_an_index_on_localhost_never_leads_to_another_loopback_host(self, server, connections):
        port = server.base.rsplit(":", 1)[1]
        child = f"http://127.0.0.2:{port}/s.xml"
        server.add("/sitemap.xml", index(child))
        code, report, _ = run_json(f"http://localhost:{port}/sitemap.xml")
        assert [f["rule"] for f in report["files"][0]["findings"]] == ["SM310"]  # type: ignore[index]
        assert code == 1
        assert {host for host, _ in connections} <= {"localhost"}
        assert server.requests == ["/sitemap.xml"]

    def test_a_typed_dns_name_is_checked_for_what_it_resolves_to(self, monkeypatch, connections):
        """A user who types a sitemap's URL names its host, not the address it
        resolves to: a name pointing at the metadata service is refused."""
        resolve = socket.getaddrinfo

        def metadata_for_evil(host: str, *args: object, **kwargs: object) -> object:
            if host == "evil.test":
                return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", 80))]
            return resolve(host, *args, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(socket, "getaddrinfo", metadata_for_evil)
        code, _, err = run("http://evil.test/sitemap.xml")
        assert code == 2
        assert "169.254.169.254, a link-local address" in err
        with pytest.raises(UnreadableTarget, match="link-local"):
            validate("http://evil.test/sitemap.xml")
        assert connections == []

    def test_only_addresses_and_localhost_are_named_by_a_url(self):
        hosts = ["127.0.0.1", "::1", "LocalHost", "a.localhost", "example.com", None, "10.0.0.5"]
        assert named_hosts(hosts) == ["127.0.0.1", "::1", "LocalHost", "a.localhost", "10.0.0.5"]

    @pytest.mark.parametrize(
        ("address", "kind"),
        [
            ("::ffff:169.254.169.254", "link-local"),  # IPv4-mapped
            ("64:ff9b::a00:1", "private"),  # NAT64 of 10.0.0.1
            ("2002:a00:1::1", "private"),  # 6to4 of 10.0.0.1
            ("64:ff9b::808:808", None),  # NAT64 of a public address
        ],
    )
    def test_ipv6_addresses_that_reach_ipv4_ones_are_judged_by_them(self, address, kind):
        assert _internal_kind(ipaddress.ip_address(address)) == kind

    def test_a_named_host_is_fetched(self, server, connections):
        port = server.base.rsplit(":", 1)[1]
        server.add("/sitemap.xml", urlset(f"http://localhost:{port}/a"))
        fetcher = HttpFetcher(use_env_proxies=False, allow_hosts=["LOCALHOST"])
        fetched = fetcher.fetch(f"http://localhost:{port}/sitemap.xml")
        assert b"".join(fetched.chunks).startswith(b"<?xml")
        fetched.close()
        assert server.requests == ["/sitemap.xml"]

    def test_the_command_allows_the_hosts_it_was_given(self, server):
        port = server.base.rsplit(":", 1)[1]
        server.add("/sitemap.xml", index(f"http://localhost:{port}/s.xml"))
        server.add("/s.xml", urlset(f"http://localhost:{port}/a"))
        code, report, _ = run_json(f"http://localhost:{port}/sitemap.xml")
        assert code == 0
        assert [f["kind"] for f in report["files"]] == ["sitemapindex", "urlset"]  # type: ignore[attr-defined]
        server.add("/t.xml", urlset(f"{server.base}/a"))
        code, _, _ = run_json(
            f"{server.base}/t.xml", "--allow-host", "10.0.0.1", "--allow-host", "x"
        )
        assert code == 0

    def test_validate_allows_the_urls_own_host_only(self, server):
        server.add("/sitemap.xml", urlset(f"{server.base}/a"))
        assert validate(f"{server.base}/sitemap.xml").findings == []
        with pytest.raises(UnreadableTarget, match="loopback"):
            validate(f"{server.base}/sitemap.xml", fetcher=HttpFetcher())


def tls_context(folder: Path, name: str) -> ssl.SSLContext:
    """A server context whose certificate, for ``name``, a new test CA signed
    (written to ``folder/ca.pem``)."""
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        unavailable("cryptography is not installed (the test extra installs it)")

    now = dt.datetime.now(dt.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())

    def certificate(subject: str, public: ec.EllipticCurvePublicKey, ca: bool) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")]))
            .public_key(public)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(hours=1))
            .not_valid_after(now + dt.timedelta(hours=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
            .add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                critical=False,
            )
        )
        if ca:  # (a key usage, as strict verification, Python 3.13's default, wants)
            signs = x509.KeyUsage(
                digital_signature=False,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            )
            builder = builder.add_extension(signs, critical=True)
        else:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False
            )
        return builder.sign(ca_key, hashes.SHA256())

    pem = serialization.Encoding.PEM
    (folder / "ca.pem").write_bytes(
        certificate("test CA", ca_key.public_key(), True).public_bytes(pem)
    )
    (folder / "cert.pem").write_bytes(certificate(name, key.public_key(), False).public_bytes(pem))
    (folder / "key.pem").write_bytes(
        key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(folder / "cert.pem", folder / "key.pem")
    return context


class TestTheCheckedAddressIsConnectedTo:
    """DNS rebinding: a name answers a public address to the check and an
    internal one to the lookup after. The connection goes to the address
    checked, or the fetch is refused; never to the second answer. Here
    127.0.0.1 (judged public) stands in for the public address, and 127.0.0.2
    for the internal one, where another server listens on the same port."""

    @pytest.fixture
    def internal(self, server: Server, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
        port = int(server.base.rsplit(":", 1)[1])
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.2", port))
            except OSError:
                unavailable("127.0.0.2 is not a local address here")
        resolve = socket.getaddrinfo
        answers = ["127.0.0.1", "127.0.0.2"]

        def rebinding(host: str, *args: object, **kwargs: object) -> object:
            if host != "rebind.test":
                return resolve(host, *args, **kwargs)  # type: ignore[arg-type]
            answer = answers.pop(0) if len(answers) > 1 else answers[0]
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answer, args[0]))]

        monkeypatch.setattr(socket, "getaddrinfo", rebinding)
        monkeypatch.setattr(
            "django_sitemaps_plus.fetch._internal_kind",
            lambda address: None if str(address) == "127.0.0.1" else _internal_kind(address),
        )
        instance = Server()
        with http_server(instance.handler, host="127.0.0.2", port=port) as base:
            instance.base = base
            yield instance

    def test_the_connection_uses_the_checked_answer(self, server, internal, connections):
        port = int(server.base.rsplit(":", 1)[1])
        server.add("/sitemap.xml", urlset(f"http://rebind.test:{port}/a"))
        internal.add("/sitemap.xml", b"internal", Content_Type="text/plain")
        fetched = HttpFetcher(use_env_proxies=False).fetch(f"http://rebind.test:{port}/sitemap.xml")
        assert b"".join(fetched.chunks).startswith(b"<?xml")
        fetched.close()
        assert connections == [("127.0.0.1", port)]
        assert server.hosts == [f"rebind.test:{port}"]  # the Host header is the name
        assert internal.requests == []

    def test_each_request_is_checked_again(self, server, internal, connections):
        port = int(server.base.rsplit(":", 1)[1])
        server.add("/sitemap.xml", b"", status=301, Location="/s.xml")
        internal.add("/s.xml", urlset(f"http://rebind.test:{port}/a"))
        with pytest.raises(FetchError, match=r"rebind\.test resolves to 127\.0\.0\.2, a loopback"):
            HttpFetcher(use_env_proxies=False).fetch(f"http://rebind.test:{port}/sitemap.xml")
        assert connections == [("127.0.0.1", port)]
        assert internal.requests == []

    def test_tls_still_verifies_the_host_name(self, server, internal, connections, monkeypatch):
        port = int(server.base.rsplit(":", 1)[1])
        wrapped: list[tuple[object, ...]] = []
        wrap_socket = ssl.SSLContext.wrap_socket

        def spy(context: ssl.SSLContext, sock: socket.socket, **kwargs: object) -> object:
            name, peer = kwargs.get("server_hostname"), sock.getpeername()
            wrapped.append((name, peer, context.check_hostname, context.verify_mode))
            return wrap_socket(context, sock, **kwargs)  # type: ignore[arg-type]

        monkeypatch.setattr(ssl.SSLContext, "wrap_socket", spy)
        with pytest.raises(FetchError, match="cannot fetch"):  # a plain HTTP server
            HttpFetcher(use_env_proxies=False, timeout=5).fetch(f"https://rebind.test:{port}/")
        # SNI and the certificate's check name the host; the socket is the vetted address.
        assert wrapped == [("rebind.test", ("127.0.0.1", port), True, ssl.CERT_REQUIRED)]
        assert internal.requests == []

    @pytest.mark.parametrize("certified", ["rebind.test", "another.test"])
    def test_tls_checks_the_certificate_against_the_name(
        self, internal, connections, monkeypatch, tmp_path, certified
    ):
        """A real TLS server on the checked address: its certificate is
        accepted for the URL's host name only (a test CA, trusted here)."""
        server_side = tls_context(tmp_path, certified)
        monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
        # The opener is built once per process; from Python 3.12 its TLS
        # context too, which reads the trusted CAs then.
        monkeypatch.setattr(http, "_openers", {})
        site = Server()
        with http_server(site.handler, tls=server_side) as base:
            port = int(base.rsplit(":", 1)[1])
            site.add("/sitemap.xml", urlset(f"https://rebind.test:{port}/a"))
            url = f"https://rebind.test:{port}/sitemap.xml"
            fetcher = HttpFetcher(use_env_proxies=False, timeout=5)
            if certified == "rebind.test":
                fetched = fetcher.fetch(url)
                assert b"".join(fetched.chunks).startswith(b"<?xml")
                fetched.close()
                assert site.requests == ["/sitemap.xml"]
            else:
                with pytest.raises(FetchError, match="certificate verify failed"):
                    fetcher.fetch(url)
                assert site.requests == []
        assert connections == [("127.0.0.1", port)]
        assert internal.requests == []

    def test_through_a_proxy_the_proxy_connects(self, server, internal, connections, monkeypatch):
        port = int(server.base.rsplit(":", 1)[1])
        # The server on 127.0.0.2 plays the proxy (rebind.test is not in no_proxy).
        monkeypatch.setenv("http_proxy", internal.base)
        # The opener is built once per process and reads the proxies then.
        monkeypatch.setattr(http, "_openers", {})
        internal.add(f"http://rebind.test:{port}/sitemap.xml", urlset("http://rebind.test/a"))
        fetched = HttpFetcher().fetch(f"http://rebind.test:{port}/sitemap.xml")
        assert b"".join(fetched.chunks).startswith(b"<?xml")
        fetched.close()
        assert connections == [("127.0.0.2", port)]

    def test_an_allowed_host_is_connected_to_by_name(self, server, connections):
        port = int(server.base.rsplit(":", 1)[1])
        server.add("/sitemap.xml", urlset(f"http://localhost:{port}/a"))
        fetched = HttpFetcher(use_env_proxies=False, allow_hosts=["localhost"]).fetch(
            f"http://localhost:{port}/sitemap.xml"
        )
        assert b"".join(fetched.chunks).startswith(b"<?xml")
        fetched.close()
        assert connections == [("localhost", port)]


class TestFetchErrorsExit2:
    """A target that cannot be read, whatever breaks: one line, exit 2."""

    def assert_one_line_error(self, args: tuple[str, ...], message: str) -> None:
        code, out, err = run(*args)
        assert code == 2
        assert out == ""
        assert err.startswith("CommandError: ") and err.count("\n") == 1, err
        assert "Traceback" not in err
        assert message in err

    def test_a_read_timeout_mid_body(self, server):
        url = server.add("/stall.xml", urlset(*(f"{server.base}/{i}" for i in range(50))))
        server.broken["/stall.xml"] = "stall"
        self.assert_one_line_error((url, "--timeout", "1"), f"reading {url} failed: timed out")

    def test_a_body_cut_short_or_reset(self, server):
        # (A reset may also come before the client read the headers: only the URL is sure.)
        for mode, message in (("close", "failed: the connection closed"), ("reset", "")):
            url = server.add(f"/{mode}.xml", urlset(*(f"{server.base}/{i}" for i in range(50))))
            server.broken[f"/{mode}.xml"] = mode
            self.assert_one_line_error((url,), f"{url} {message}".strip())

    def test_a_child_that_breaks_off_is_a_finding(self, server):
        b = server.base
        server.add("/sitemap.xml", index(f"{b}/stall.xml"))
        server.add("/stall.xml", urlset(*(f"{b}/{i}" for i in range(50))))
        server.broken["/stall.xml"] = "stall"
        code, report, _ = run_json(f"{b}/sitemap.xml", "--timeout", "1")
        assert code == 1
        (finding,) = findings(report, "SM601")
        assert finding["message"] == f"reading {b}/stall.xml failed: timed out"

    def test_dns_failure_and_tls_error(self, server):
        self.assert_one_line_error(
            ("http://no-such-host.invalid/sitemap.xml",), "cannot resolve no-such-host.invalid"
        )
        https = server.base.replace("http://", "https://")  # a plain HTTP server
        self.assert_one_line_error((f"{https}/sitemap.xml", "--timeout", "5"), "cannot fetch")

    def test_unsupported_schemes_are_refused(self, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        (tmp_path / "ftp:").mkdir()  # were it taken for a path, it would name a directory
        for target in ("ftp://example.com/sitemap.xml", "FILE:///etc/passwd"):
            scheme = target.split(":")[0].lower()
            self.assert_one_line_error((target,), f"unsupported URL scheme {scheme!r}")
        with pytest.raises(UnreadableTarget, match="http and https only"):
            validate("gopher://example.com/")


def static_sitemaps(request: HttpRequest, name: str) -> HttpResponse:
    base = "https://example.com"
    files = {
        "sitemap.xml": index(f"{base}/sitemap-pages-1.xml"),
        "sitemap-pages-1.xml": urlset(f"{base}/", f"{base}/about/"),
        "sitemap-pages-1.txt": f"{base}/\n{base}/about/\n".encode(),
    }
    if name not in files:
        return HttpResponse(status=404)
    content_type = "text/plain" if name.endswith(".txt") else "application/xml"
    return HttpResponse(files[name], content_type=content_type)


static_patterns = (
    [
        path("sitemap.xml", static_sitemaps, {"name": "sitemap.xml"}, name="index"),
        path("<str:name>", static_sitemaps, name="file"),
    ],
    "sitemaps_plus",
)
urlpatterns = [path("", include(static_patterns))]


@pytest.mark.django_db  # the base URL may come from the Sites framework
class TestOwnSite:
    @override_settings(ROOT_URLCONF=__name__)
    def test_static_site_through_the_test_client(self):
        report = validate_site()
        assert [(f.target, f.kind) for f in report.files] == [
            ("https://example.com/sitemap.xml", "sitemapindex"),
            ("https://example.com/sitemap-pages-1.xml", "urlset"),
            ("https://example.com/sitemap-pages-1.txt", "text"),
        ]
        assert report.findings == []

    @override_settings(ROOT_URLCONF=__name__)
    def test_assert_valid_sitemap_without_a_target_checks_the_site(self, monkeypatch):
        report = assert_valid_sitemap()
        assert [f.target for f in report.files] == [
            "https://example.com/sitemap.xml",
            "https://example.com/sitemap-pages-1.xml",
            "https://example.com/sitemap-pages-1.txt",
        ]
        monkeypatch.setattr(f"{__name__}.urlset", lambda *locs: b"<urlset>")  # no entries
        with pytest.raises(AssertionError, match=r"sitemap-pages-1\.xml: .*SM202"):
            assert_valid_sitemap()

    @override_settings(ROOT_URLCONF=__name__)
    def test_the_client_fetcher_serves_this_site_only(self):
        fetcher = SiteFetcher("https://example.com/sitemap.xml")
        fetched = fetcher.fetch("https://example.com/sitemap-pages-1.xml")
        fetched.close()
        assert fetched.final_url == "https://example.com/sitemap-pages-1.xml"
        for url in ("https://evil.example/sitemap-pages-1.xml", "http://example.com/sitemap.xml"):
            with pytest.raises(FetchError, match="is not on this site"):
                fetcher.fetch(url)

    @override_settings(ROOT_URLCONF=__name__)
    def test_the_site_fetcher_leaves_connection_handling_alone(self):
        from django.core.signals import request_finished, request_started
        from django.db import close_old_connections, connection, transaction

        def connected() -> tuple[bool, bool]:
            return (
                any(r[1]() is close_old_connections for r in request_started.receivers),
                any(r[1]() is close_old_connections for r in request_finished.receivers),
            )

        before = connected()
        with transaction.atomic():
            fetcher = SiteFetcher("https://example.com/sitemap.xml")
            for path in ("sitemap.xml", "sitemap-pages-1.xml"):
                fetched = fetcher.fetch(f"https://example.com/{path}")
                b"".join(fetched.chunks)
                fetched.close()
            # The transaction is still usable: no connection was closed under it.
            assert connection.in_atomic_block
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
        assert connected() == before == (True, True)

    def test_real_views_end_to_end(self, registry):
        register(Article, lastmod_fields=["updated_at"], limit=2)
        when = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
        Article.objects.bulk_create(
            Article(pk=i + 1, title=f"t{i}", slug=f"article-{i}", updated_at=when + dt.timedelta(i))
            for i in range(3)
        )
        report = validate_site()
        kinds = [f.kind for f in report.files]
        # Each file's .txt twin, and /sitemap.txt (three URLs fit one text file).
        assert kinds == ["sitemapindex", "urlset", "urlset", "text", "text", "text"]
        assert sum(f.entries for f in report.files if f.kind == "urlset") == 3
        assert report.findings == []

    def test_all_urls_text_file_is_checked_when_it_exists(self, registry):
        register(Article, lastmod_fields=["updated_at"])
        Article.objects.create(
            title="t", slug="only", updated_at=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
        )
        report = validate_site()
        targets = [f.target for f in report.files]
        assert "https://example.com/sitemap.txt" in targets
        assert report.findings == []
