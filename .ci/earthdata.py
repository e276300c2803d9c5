"""NASA Earthdata as the tests meet it, written from its documented protocols: a DAAC (its data
distribution and its `/s3credentials`), Earthdata Login, and the signed object-store URLs the DAAC
redirects to. Each is its own host on loopback, so that a test can see what each one was sent.

The DAAC, `http://127.0.0.3:PORT`:
- `GET /s3credentials` with `Authorization: Bearer <ZK_EARTHDATA_TOKEN>`: temporary S3 credentials
  for moto's role `zk-data-temporary` (taken with zk-data's keys, ZK_S3_DATA_KEY and
  ZK_S3_DATA_SECRET, as the DAAC takes its own), answered as the DAACs answer them:
      {"accessKeyId": ..., "secretAccessKey": ..., "sessionToken": ..., "expiration": "2026-01-27 00:50:09+00:00"}
  moto checks the session token of every request made with them. `/lifetime-SECONDS/s3credentials`
  sets the expiration announced (an hour by default), so that a test sees credentials expire.
  A wrong token is 401; the session cookie of a login serves as the token; neither is a redirect
  to Earthdata Login, as for the objects.
- `GET|HEAD /<bucket>/<key>`: the object, as a DAAC's HTTPS distribution serves what it also keeps in
  S3. With the bearer token, or the session cookie of a login: 307 to a signed URL on the
  object-store host. A wrong token: 401. Neither: 302 to Earthdata Login's `/oauth/authorize`, whose
  `redirect_uri` is the DAAC's `/login`, which takes the code, sets the session cookie
  (`daac_session`) and redirects back to the object.
- `GET /__stats`: how many credentials were handed out and refused.

Earthdata Login, `http://127.0.0.2:PORT+1`: `/oauth/authorize` takes basic authentication
(ZK_EARTHDATA_USER, ZK_EARTHDATA_PASSWORD) or its own session cookie (`urs_session`, set on a
login), and redirects to the `redirect_uri` with a code; without either, 401.

The object-store host, `http://127.0.0.4:PORT+2`: `/<bucket>/<key>?X-Amz-Expires=..&X-Amz-Signature=..`
serves the object from moto (with `Range`, `ETag` and `Last-Modified`) if the signature is the
DAAC's; otherwise 403.

Every host answers `GET /__seen` with the requests it has seen (method, path, headers), so that a
test can check that no host was sent another's credentials.

    python earthdata.py PORT MOTO_ENDPOINT
"""

import datetime
import hashlib
import hmac
import http.server
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse

import boto3
import botocore.exceptions

ROLE_ARN = "arn:aws:iam::123456789012:role/zk-data-temporary"
DAAC, LOGIN, SIGNED = "127.0.0.3", "127.0.0.2", "127.0.0.4"


class Host(http.server.BaseHTTPRequestHandler):
    """What the three hosts share: the log of requests seen, and answers."""

    seen: list = []

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        url = urllib.parse.urlparse(self.path)
        if url.path == "/__seen":
            return self.answer(200, json.dumps(self.seen).encode(), "application/json")
        self.seen.append({"method": self.command, "path": url.path, "headers": dict(self.headers.items())})
        self.route(url, urllib.parse.parse_qs(url.query))

    def do_HEAD(self) -> None:  # noqa: N802
        self.do_GET()

    def route(self, url, query) -> None:
        raise NotImplementedError

    def answer(self, status: int, body: bytes = b"", content_type: str = "text/plain", headers=()) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def redirect(self, status: int, location: str, cookie: str | None = None) -> None:
        headers = [("Location", location)] + ([("Set-Cookie", cookie)] if cookie else [])
        self.answer(status, b"", headers=headers)

    def cookie(self, name: str) -> str | None:
        for part in self.headers.get("Cookie", "").split(";"):
            key, _, value = part.strip().partition("=")
            if key == name:
                return value
        return None

    def log_message(self, *args) -> None:
        pass


def signature(secret: bytes, path: str, expires: str) -> str:
    return hmac.new(secret, f"{path}\n{expires}".encode(), hashlib.sha256).hexdigest()


def main() -> None:
    port, moto = int(sys.argv[1]), sys.argv[2]
    token = os.environ["ZK_EARTHDATA_TOKEN"]
    user, password = os.environ["ZK_EARTHDATA_USER"], os.environ["ZK_EARTHDATA_PASSWORD"]
    keys = {"endpoint_url": moto, "region_name": "us-east-1",
            "aws_access_key_id": os.environ["ZK_S3_DATA_KEY"],
            "aws_secret_access_key": os.environ["ZK_S3_DATA_SECRET"]}
    sts, s3 = boto3.client("sts", **keys), boto3.client("s3", **keys)
    stats = {"credentials": 0, "refused": 0}
    signing_key = secrets.token_bytes(32)
    codes, daac_sessions, login_sessions = set(), set(), set()
    daac_url, login_url, signed_url = f"http://{DAAC}:{port}", f"http://{LOGIN}:{port + 1}", f"http://{SIGNED}:{port + 2}"

    class Daac(Host):
        seen = []

        def route(self, url, query) -> None:
            parts = url.path.strip("/").split("/")
            if url.path == "/__stats":
                return self.json(200, stats)
            if parts[-1] == "s3credentials" and (len(parts) == 1 or (len(parts) == 2 and parts[0].startswith("lifetime-"))):
                return self.credentials(int(parts[0].removeprefix("lifetime-")) if len(parts) == 2 else 3600, url.path)
            if url.path == "/login":
                code, state = query.get("code", [""])[0], query.get("state", ["/"])[0]
                if code not in codes:
                    return self.json(401, {"error": "invalid_grant"})
                codes.discard(code)
                session = secrets.token_urlsafe(16)
                daac_sessions.add(session)
                return self.redirect(302, state, f"daac_session={session}; Path=/; HttpOnly")
            if len(parts) < 2:
                return self.json(404, {"error": "not found"})
            if not self.authorized(url.path):
                return None
            expires = str(int(time.time()) + 3600)
            signed = urllib.parse.urlencode({"X-Amz-Expires": expires,
                                             "X-Amz-Signature": signature(signing_key, url.path, expires)})
            return self.redirect(307, f"{signed_url}{url.path}?{signed}")

        def authorized(self, path: str) -> bool:
            """The bearer token, or a login's cookie; otherwise answer: 401 for a wrong token, a
            redirect to Earthdata Login (back to `path`) for neither."""
            authorization = self.headers.get("Authorization")
            if authorization is not None and authorization != f"Bearer {token}":
                self.json(401, {"error": "Unauthorized", "error_description": "invalid bearer token"})
                return False
            if authorization is None and self.cookie("daac_session") not in daac_sessions:
                back = urllib.parse.urlencode({"client_id": "zk-daac", "response_type": "code",
                                               "redirect_uri": f"{daac_url}/login", "state": path})
                self.redirect(302, f"{login_url}/oauth/authorize?{back}")
                return False
            return True

        def credentials(self, lifetime: int, path: str) -> None:
            if not self.authorized(path):
                stats["refused"] += 1
                return None
            answer = sts.assume_role(RoleArn=ROLE_ARN, RoleSessionName="zk-tests", DurationSeconds=3600)["Credentials"]
            expiration = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=lifetime)
            stats["credentials"] += 1
            return self.json(200, {
                "accessKeyId": answer["AccessKeyId"],
                "secretAccessKey": answer["SecretAccessKey"],
                "sessionToken": answer["SessionToken"],
                "expiration": expiration.strftime("%Y-%m-%d %H:%M:%S+00:00"),
            })

        def json(self, status: int, body: dict) -> None:
            self.answer(status, json.dumps(body).encode(), "application/json")

    class Login(Host):
        seen = []

        def route(self, url, query) -> None:
            if url.path != "/oauth/authorize":
                return self.answer(404, b"not found")
            expected = "Basic " + __import__("base64").b64encode(f"{user}:{password}".encode()).decode()
            cookie = None
            if self.cookie("urs_session") not in login_sessions:
                if self.headers.get("Authorization") != expected:
                    return self.answer(401, b"Earthdata Login: credentials required",
                                       headers=[("WWW-Authenticate", 'Basic realm="Please enter your Earthdata Login credentials"')])
                session = secrets.token_urlsafe(16)
                login_sessions.add(session)
                cookie = f"urs_session={session}; Path=/; HttpOnly"
            code = secrets.token_urlsafe(16)
            codes.add(code)
            back = urllib.parse.urlencode({"code": code, "state": query.get("state", ["/"])[0]})
            return self.redirect(302, f"{query['redirect_uri'][0]}?{back}", cookie)

    class Signed(Host):
        seen = []

        def route(self, url, query) -> None:
            expires, given = query.get("X-Amz-Expires", ["0"])[0], query.get("X-Amz-Signature", [""])[0]
            if int(expires) < time.time() or not hmac.compare_digest(given, signature(signing_key, url.path, expires)):
                return self.answer(403, b"<Error><Code>AccessDenied</Code><Message>Request has expired or is not signed</Message></Error>",
                                   "application/xml")
            bucket, _, key = url.path.strip("/").partition("/")
            ask = {"Bucket": bucket, "Key": key}
            if self.headers.get("Range"):
                ask["Range"] = self.headers["Range"]
            for header, name in [("If-Match", "IfMatch"), ("If-None-Match", "IfNoneMatch")]:
                if self.headers.get(header):
                    ask[name] = self.headers[header]
            try:
                got = (s3.head_object if self.command == "HEAD" else s3.get_object)(**ask)
            except botocore.exceptions.ClientError as error:
                status = int(error.response["ResponseMetadata"]["HTTPStatusCode"])
                return self.answer(status, b"", "application/xml")
            body = b"" if self.command == "HEAD" else got["Body"].read()
            headers = [("ETag", got["ETag"]), ("Accept-Ranges", "bytes"),
                       ("Last-Modified", got["LastModified"].strftime("%a, %d %b %Y %H:%M:%S GMT"))]
            if got.get("ContentRange"):
                headers.append(("Content-Range", got["ContentRange"]))
            status = 206 if got.get("ContentRange") else 200
            self.send_response(status)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(got["ContentLength"]))
            for name, value in headers:
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

    servers = [http.server.ThreadingHTTPServer((DAAC, port), Daac),
               http.server.ThreadingHTTPServer((LOGIN, port + 1), Login),
               http.server.ThreadingHTTPServer((SIGNED, port + 2), Signed)]
    for server in servers[1:]:
        threading.Thread(target=server.serve_forever, daemon=True).start()
    servers[0].serve_forever()


if __name__ == "__main__":
    main()
