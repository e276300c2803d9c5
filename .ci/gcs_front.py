"""Google Cloud Storage's authentication in front of fake-gcs-server, which checks none.

fake-gcs-server (the emulator object_store's own CI uses) serves any request. GCS checks each
request's bearer token; a service account's token, as object_store makes it, is a JWT the
account signs itself with its private key (RS256, `kid` the key's id, `iss` the account's
email; https://developers.google.com/identity/protocols/oauth2/service-account#jwt-auth).
This front does what GCS does with one, so that the tests can tell the right credentials
from the wrong ones, as they do on S3 (moto with IAM) and Azure (azurite with two accounts):

- no token, or one that is not a JWT signed by a known account's key, or has expired: 401,
  GCS's XML error `AuthenticationRequired`;
- a valid token of an account not allowed the request's bucket: 403, `AccessDenied`;
- anything else is passed to the emulator, and its answer back.

Every request object_store makes of GCS is of the XML API, whose path starts with the bucket.
The emulator serves the XML API's reads, listings and deletes, but takes a PUT of an object only
through a signed URL: an upload by PUT (object_store's `put`) is given to it as the JSON API's
media upload, its precondition (`x-goog-if-generation-match`) as that API's `ifGenerationMatch`,
and the new object's ETag and generation are answered in the XML API's headers. XML multipart
uploads and copies, which the tests do not make, are answered 501.

    python gcs_front.py PORT BACKEND ACCOUNTS.json
ACCOUNTS.json: [{"email": ..., "key_id": ..., "public_key": PEM, "bucket": ...}, ...]
"""

from __future__ import annotations

import base64
import http.client
import json
import sys
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

port, backend, accounts_file = int(sys.argv[1]), urllib.parse.urlsplit(sys.argv[2]), sys.argv[3]
with open(accounts_file) as f:
    ACCOUNTS = {
        a["key_id"]: dict(a, public_key=serialization.load_pem_public_key(a["public_key"].encode())) for a in json.load(f)
    }
# Hop-by-hop headers, which are the connection's, not the message's.
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-authorization"}


def _b64(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def account_of(authorization: str | None) -> dict | None:
    """The account whose valid token `authorization` carries, or None."""
    if not authorization or not authorization.startswith("Bearer "):
        return None
    try:
        header, claims, signature = authorization[len("Bearer ") :].split(".")
        head, body = json.loads(_b64(header)), json.loads(_b64(claims))
        account = ACCOUNTS.get(head.get("kid"))
        if account is None or head.get("alg") != "RS256" or body.get("iss") != account["email"]:
            return None
        if not body.get("exp", 0) > time.time():
            return None
        account["public_key"].verify(
            _b64(signature), f"{header}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256()
        )
        return account
    except (ValueError, KeyError, InvalidSignature):
        return None


class Front(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def _error(self, status: int, code: str, message: str) -> None:
        body = (
            "<?xml version='1.0' encoding='UTF-8'?>"
            f"<Error><Code>{code}</Code><Message>{message}</Message></Error>"
        ).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/xml; charset=UTF-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", 0)))

    def _handle(self) -> None:
        body = self._body()
        path = urllib.parse.urlsplit(self.path).path
        bucket = urllib.parse.unquote(path.lstrip("/").split("/", 1)[0])
        account = account_of(self.headers.get("Authorization"))
        if account is None:
            return self._error(401, "AuthenticationRequired", "Authentication required.")
        if account["bucket"] != bucket:
            return self._error(
                403,
                "AccessDenied",
                f"{account['email']} does not have storage.objects access to the Google Cloud Storage bucket.",
            )
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP | {"host", "authorization"}}
        headers["Content-Length"] = str(len(body))
        target, upload = self.path, self.command == "PUT"
        if upload:
            url = urllib.parse.urlsplit(self.path)
            name = urllib.parse.unquote(path.lstrip("/").split("/", 1)[-1])
            if url.query or "x-goog-copy-source" in (k.lower() for k in headers):
                return self._error(501, "NotImplemented", "XML multipart uploads and copies are not emulated.")
            query = {"uploadType": "media", "name": name}
            generation = self.headers.get("x-goog-if-generation-match")
            if generation is not None:
                query["ifGenerationMatch"] = generation
            target = f"/upload/storage/v1/b/{urllib.parse.quote(bucket)}/o?{urllib.parse.urlencode(query)}"
        connection = http.client.HTTPConnection(backend.hostname, backend.port, timeout=60)
        try:
            connection.request("POST" if upload else self.command, target, body=body, headers=headers)
            response = connection.getresponse()
            answer = response.read()
            self.send_response(response.status)
            if upload and response.status == 200:
                created = json.loads(answer)
                self.send_header("ETag", f'"{created["etag"]}"')
                self.send_header("x-goog-generation", str(created["generation"]))
                answer = b""
            for key, value in response.getheaders():
                if key.lower() not in HOP | {"content-length"} and not (upload and response.status == 200):
                    self.send_header(key, value)
            # A HEAD's length is the object's, which the emulator gives.
            length = response.getheader("Content-Length") if self.command == "HEAD" else str(len(answer))
            self.send_header("Content-Length", length or "0")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(answer)
        finally:
            connection.close()

    do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = _handle


ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("127.0.0.1", port), Front).serve_forever()
