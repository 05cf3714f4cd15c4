"""TLS for `wss://`: a self-signed certificate made on demand (or one given) and its SHA-256 pin."""

import datetime
import hashlib
import ipaddress
import os
import ssl

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

CERT_NAME = "tls-cert.pem"
KEY_NAME = "tls-key.pem"


def ensure_self_signed(directory):
    """Paths of a self-signed cert/key for 127.0.0.1 and localhost in `directory`, made if absent.

    Kept in the state directory so the fingerprint (the client's pin) survives a Gateway restart.
    """
    cert_path = os.path.join(directory, CERT_NAME)
    key_path = os.path.join(directory, KEY_NAME)
    if os.path.exists(cert_path) and os.path.exists(key_path):
        return cert_path, key_path
    os.makedirs(directory, mode=0o700, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "openclaw reference gateway")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(name).issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.SubjectAlternativeName([
                x509.DNSName("localhost"),
                x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                x509.IPAddress(ipaddress.ip_address("::1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key_pem)
    with open(cert_path, "wb") as handle:
        handle.write(cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


def leaf_fingerprint(cert_path):
    """Lowercase hex SHA-256 of the leaf certificate's DER bytes (the pinned value)."""
    with open(cert_path, "rb") as handle:
        data = handle.read()
    cert = x509.load_pem_x509_certificates(data)[0]
    return hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()


def server_context(cert_path, key_path):
    """An SSL context serving the given certificate chain."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert_path, key_path)
    return context
