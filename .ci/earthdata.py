"""A credentials endpoint as NASA's DAACs serve one (`GET https://<daac>/s3credentials`), for the
tests: with `Authorization: Bearer <ZK_EARTHDATA_TOKEN>`, temporary S3 credentials for moto's role
`zk-data-temporary` (taken with zk-data's keys, ZK_S3_DATA_KEY and ZK_S3_DATA_SECRET, as the DAAC
takes its own), answered as the DAACs answer them:

    {"accessKeyId": ..., "secretAccessKey": ..., "sessionToken": ..., "expiration": "2026-01-27 00:50:09+00:00"}

moto checks the session token of every request made with them. `/lifetime-SECONDS/s3credentials`
sets the expiration announced (an hour by default), so that a test sees credentials expire and be
renewed.
A missing or wrong token is 401, as Earthdata Login answers it. `GET /__stats` counts the
credentials handed out.

    python s3credentials.py PORT MOTO_ENDPOINT
"""

import datetime
import http.server
import json
import os
import sys
import urllib.parse

import boto3

ROLE_ARN = "arn:aws:iam::123456789012:role/zk-data-temporary"


def main() -> None:
    port, moto = int(sys.argv[1]), sys.argv[2]
    token = os.environ["ZK_EARTHDATA_TOKEN"]
    sts = boto3.client("sts", endpoint_url=moto, region_name="us-east-1",
                       aws_access_key_id=os.environ["ZK_S3_DATA_KEY"],
                       aws_secret_access_key=os.environ["ZK_S3_DATA_SECRET"])
    handed_out = {"credentials": 0, "refused": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            url = urllib.parse.urlparse(self.path)
            if url.path == "/__stats":
                return self._json(200, handed_out)
            parts = url.path.strip("/").split("/")
            if parts[-1] != "s3credentials" or len(parts) > 2 or (len(parts) == 2 and not parts[0].startswith("lifetime-")):
                return self._json(404, {"error": "not found"})
            if self.headers.get("Authorization") != f"Bearer {token}":
                handed_out["refused"] += 1
                return self._json(401, {"error": "Unauthorized", "error_description": "invalid bearer token"})
            lifetime = int(parts[0].removeprefix("lifetime-")) if len(parts) == 2 else 3600
            credentials = sts.assume_role(RoleArn=ROLE_ARN, RoleSessionName="zk-tests", DurationSeconds=3600)
            credentials = credentials["Credentials"]
            expiration = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=lifetime)
            handed_out["credentials"] += 1
            return self._json(200, {
                "accessKeyId": credentials["AccessKeyId"],
                "secretAccessKey": credentials["SecretAccessKey"],
                "sessionToken": credentials["SessionToken"],
                "expiration": expiration.strftime("%Y-%m-%d %H:%M:%S+00:00"),
            })

        def _json(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args) -> None:
            pass

    http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    main()
