"""A certificate authority for the benches' mutual-TLS runs, made once per run with openssl and
keytool as an operator makes one (the approach of compat/harness/pki.rs, in the benches' language).

Every certificate is an EC P-256 key signed by the run's CA, names `localhost` and `127.0.0.1`
(hostname verification passes on loopback), serves as server and client, and has the subject
`CN=<name>,O=kraftd bench`. Each identity gets a PKCS12 key store (openssl); the CA goes into a
PKCS12 trust store made by keytool (Java trusts only entries keytool marks as trusted). kraftd
and Java read the same files.

    pki = Pki(os.path.join(run_dir, "pki"))          # the CA, made now
    props = pki.listener_props("controller-1")      # the CONTROLLER listener on SSL, client auth required

The passwords are test values: these stores protect nothing.
"""

import os
import shutil
import socket
import ssl
import struct
import subprocess

STORE_PASSWORD = "bench-store-pass"
TRUST_PASSWORD = "bench-trust-pass"
ORGANIZATION = "kraftd bench"


class PkiError(Exception):
    pass


def _keytool():
    """keytool beside the java that runs Kafka (JAVA_HOME), else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "keytool"), os.X_OK):
        return os.path.join(home, "bin", "keytool")
    found = shutil.which("keytool")
    if not found:
        raise PkiError("keytool not found (JAVA_HOME/bin or PATH); the TLS runs need a JDK")
    return found


def _run(argv):
    try:
        res = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise PkiError(f"{argv[0]}: {e}")
    if res.returncode != 0:
        # The arguments hold only test passwords; stderr says what failed.
        raise PkiError(f"{os.path.basename(argv[0])} {argv[1]} failed ({res.returncode}): {res.stderr.strip()[-400:]}")


class Pki:
    def __init__(self, directory):
        self.dir = os.path.abspath(directory)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir)
        self.ca_pem = os.path.join(self.dir, "ca.pem")
        self.ca_key = os.path.join(self.dir, "ca-key.pem")
        _run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
              "-keyout", self.ca_key, "-out", self.ca_pem, "-days", "30",
              "-subj", f"/O={ORGANIZATION}/CN=kraftd bench CA"])
        self.truststore = os.path.join(self.dir, "truststore.p12")
        _run([_keytool(), "-importcert", "-noprompt", "-alias", "ca", "-file", self.ca_pem,
              "-keystore", self.truststore, "-storetype", "PKCS12", "-storepass", TRUST_PASSWORD])
        self._issued = {}
        self._serial = 1

    def keystore(self, name):
        """The PKCS12 key store of identity `name`, issued on first use."""
        if name not in self._issued:
            self._issued[name] = self._issue(name)
        return self._issued[name]

    def _issue(self, name):
        d = os.path.join(self.dir, name)
        os.makedirs(d, exist_ok=True)
        key, csr, cert, ext = (os.path.join(d, f) for f in ("key.pem", "request.csr", "cert.pem", "ext.cnf"))
        _run(["openssl", "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
              "-keyout", key, "-subj", f"/O={ORGANIZATION}/CN={name}", "-out", csr])
        with open(ext, "w") as f:
            f.write("basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\n"
                    "extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n")
        self._serial += 1
        _run(["openssl", "x509", "-req", "-in", csr, "-CA", self.ca_pem, "-CAkey", self.ca_key,
              "-set_serial", str(self._serial), "-days", "30", "-extfile", ext, "-out", cert])
        store = os.path.join(d, "keystore.p12")
        _run(["openssl", "pkcs12", "-export", "-inkey", key, "-in", cert, "-certfile", self.ca_pem,
              "-name", name, "-passout", f"pass:{STORE_PASSWORD}", "-out", store])
        return store

    def ssl_props(self, name, prefix=""):
        """Kafka's ssl.* key and trust store settings for identity `name`, keys prefixed."""
        props = {
            "ssl.keystore.type": "PKCS12", "ssl.keystore.location": self.keystore(name),
            "ssl.keystore.password": STORE_PASSWORD,
            "ssl.truststore.type": "PKCS12", "ssl.truststore.location": self.truststore,
            "ssl.truststore.password": TRUST_PASSWORD,
        }
        return {prefix + k: v for k, v in props.items()}

    def listener_props(self, name, listener="CONTROLLER"):
        """A node's settings that put `listener` on SSL with required client certificates."""
        prefix = f"listener.name.{listener.lower()}."
        props = {"listener.security.protocol.map": f"{listener}:SSL",
                 f"{prefix}ssl.client.auth": "required"}
        props.update(self.ssl_props(name, prefix))
        return props


# ApiVersions v0, correlation id 7, client id "pki-probe".
_API_VERSIONS = struct.pack(">hhih", 18, 0, 7, 9) + b"pki-probe"
_API_VERSIONS = struct.pack(">i", len(_API_VERSIONS)) + _API_VERSIONS


def _answers(sock):
    """Whether an ApiVersions request on `sock` gets a Kafka answer (its correlation id back)."""
    try:
        sock.settimeout(5)
        sock.sendall(_API_VERSIONS)
        head = b""
        while len(head) < 8:
            chunk = sock.recv(8 - len(head))
            if not chunk:
                return False
            head += chunk
        return struct.unpack(">ii", head)[1] == 7
    except (OSError, ssl.SSLError):
        return False


def check_listener(pki, port, expect_cn, host="127.0.0.1"):
    """Checks that `port` speaks TLS with client certificates required: ApiVersions answered over
    TLS with a client certificate of the run's CA (and the server's certificate is `expect_cn`'s),
    not answered over TLS without one, nor in plaintext. Returns what it found; raises PkiError
    when the listener is not mutual TLS."""
    found = {}
    with socket.create_connection((host, port), timeout=5) as raw:
        found["plaintext_answered"] = _answers(raw)
    for with_cert in (True, False):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.load_verify_locations(pki.ca_pem)
        if with_cert:
            pki.keystore("bench-probe")
            d = os.path.join(pki.dir, "bench-probe")
            ctx.load_cert_chain(os.path.join(d, "cert.pem"), os.path.join(d, "key.pem"))
        key = "tls_with_client_cert_answered" if with_cert else "tls_without_client_cert_answered"
        try:
            with socket.create_connection((host, port), timeout=5) as raw, \
                    ctx.wrap_socket(raw, server_hostname=host) as tls:
                if with_cert:
                    subject = dict(x[0] for x in tls.getpeercert()["subject"])
                    found["server_cn"] = subject.get("commonName")
                    found["tls_version"] = tls.version()
                    found["cipher"] = tls.cipher()[0]
                found[key] = _answers(tls)
        except (OSError, ssl.SSLError) as e:
            found[key] = False
            if with_cert:
                found["error"] = str(e)
    ok = (found.get("tls_with_client_cert_answered") and found.get("server_cn") == expect_cn
          and not found.get("tls_without_client_cert_answered") and not found.get("plaintext_answered"))
    if not ok:
        raise PkiError(f"port {port} is not a mutual-TLS listener of {expect_cn}: {found}")
    return found
