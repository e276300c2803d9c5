"""The conformance corpus read from real object stores (.ci/servers.sh: S3 on moto, Azure on
azurite, GCS on fake-gcs-server behind .ci/gcs_front.py): every case, reference files and
targets in one bucket (relative URLs), exactly; the wrong keys refused with an error that names
the location; icechunk repositories in each, written and read back."""

from __future__ import annotations

import base64
import json
import os
import time
import urllib.parse
import urllib.request

import pytest
from conftest import cases, s3_user, server
from test_conformance import check

from zarrs_kerchunk import AccessDeniedError, ReferenceStore

CASES = cases()


def _files(case):
    for path in case.folder.rglob("*"):
        if path.is_file():
            yield path, f"{case.name}/{path.relative_to(case.folder).as_posix()}"


@pytest.fixture(scope="module")
def s3() -> dict[str, str]:
    client, options = s3_user("REFS")
    for case in CASES:
        for path, name in _files(case):
            client.put_object(Bucket="zk-refs", Key=f"python/{name}", Body=path.read_bytes())
    return options


@pytest.fixture(scope="module")
def azure() -> dict[str, str]:
    endpoint = server("ZK_AZURE")
    if endpoint is None:
        pytest.skip("no Azure server: start the servers with .ci/servers.sh")
    from azure.storage.blob import BlobServiceClient

    account, key = os.environ["ZK_AZURE_KEYS"].split(",")[0].split(":", 1)
    connection = (
        f"DefaultEndpointsProtocol=http;AccountName={account};AccountKey={key};BlobEndpoint={endpoint}/{account};"
    )
    container = BlobServiceClient.from_connection_string(connection).get_container_client("zk-refs")
    for case in CASES:
        for path, name in _files(case):
            container.upload_blob(f"python/{name}", path.read_bytes(), overwrite=True)
    return {
        "azure_storage_account_name": account,
        "azure_storage_account_key": key,
        "azure_storage_endpoint": f"{endpoint}/{account}",
        "azure_allow_http": "true",
    }


def _gcs_token(account_file: str) -> str:
    """A service account's self-signed token, as object_store makes it (RS256, `kid` its key's
    id): what the GCS front checks."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding

    with open(account_file) as f:
        account = json.load(f)

    def encode(part: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(part).encode()).rstrip(b"=").decode()

    now = int(time.time())
    claims = {"iss": account["client_email"], "sub": account["client_email"], "iat": now, "exp": now + 3600,
              "scope": "https://www.googleapis.com/auth/cloud-platform"}
    message = f"{encode({'alg': 'RS256', 'typ': 'JWT', 'kid': account['private_key_id']})}.{encode(claims)}"
    key = serialization.load_pem_private_key(account["private_key"].encode(), password=None)
    signature = key.sign(message.encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{message}.{base64.urlsafe_b64encode(signature).rstrip(b'=').decode()}"


@pytest.fixture(scope="module")
def gcs() -> dict[str, str]:
    endpoint = server("ZK_GCS")
    if endpoint is None:
        pytest.skip("no GCS server: start the servers with .ci/servers.sh")
    account = os.environ["ZK_GCS_REFS_ACCOUNT"]
    token = _gcs_token(account)
    for case in CASES:
        for path, name in _files(case):
            url = f"{endpoint}/zk-refs/{urllib.parse.quote(f'python/{name}', safe='')}"
            request = urllib.request.Request(url, data=path.read_bytes(), method="PUT",
                                             headers={"Authorization": f"Bearer {token}"})
            urllib.request.urlopen(request).close()
    # The key file names the server (`gcs_base_url`), as a service account's file may.
    return {"google_service_account": account}


FILES = [pytest.param(case, file, id=f"{case.name}/{file}") for case in CASES for file in case.references()]


@pytest.mark.parametrize(("case", "file"), FILES)
def test_reads_exactly_from_s3(case, file, s3) -> None:
    assert check(case, ReferenceStore(f"s3://zk-refs/python/{case.name}/{file}", storage_options=s3)) == []


@pytest.mark.parametrize(("case", "file"), FILES)
def test_reads_exactly_from_azure(case, file, azure) -> None:
    assert check(case, ReferenceStore(f"az://zk-refs/python/{case.name}/{file}", storage_options=azure)) == []


@pytest.mark.parametrize(("case", "file"), FILES)
def test_reads_exactly_from_gcs(case, file, gcs) -> None:
    assert check(case, ReferenceStore(f"gs://zk-refs/python/{case.name}/{file}", storage_options=gcs)) == []


def test_wrong_keys_are_refused(s3) -> None:
    case = CASES[0]
    location = f"s3://zk-refs/python/{case.name}/{case.references()[0]}"
    wrong = dict(s3, aws_access_key_id=os.environ["ZK_S3_DATA_KEY"], aws_secret_access_key=os.environ["ZK_S3_DATA_SECRET"])
    # The service's 403 is the documented AccessDeniedError, naming the reference file.
    with pytest.raises(AccessDeniedError) as raised:
        ReferenceStore(location, storage_options=wrong)
    assert location in str(raised.value)
    assert "lacked the necessary privileges" in str(raised.value)


def test_the_other_buckets_service_account_is_refused(gcs) -> None:
    case = CASES[0]
    location = f"gs://zk-refs/python/{case.name}/{case.references()[0]}"
    wrong = dict(gcs, google_service_account=os.environ["ZK_GCS_DATA_ACCOUNT"])
    with pytest.raises(AccessDeniedError) as raised:
        ReferenceStore(location, storage_options=wrong)
    assert location in str(raised.value)
    assert "lacked the necessary privileges" in str(raised.value)


def test_an_icechunk_repository_in_s3_round_trips(s3: dict[str, str]) -> None:
    """A case in the bucket committed into a repository in the same bucket
    (`icechunk+s3://zk-refs/PREFIX`, its storage reached with the bucket's keys), then opened
    back as references: every array reads the case's ground truth."""
    from zarrs_kerchunk import tools

    case = next(c for c in CASES if c.name == "nc4_deflate_shuffle")
    repository = f"icechunk+s3://zk-refs/python-icechunk-{os.getpid()}"
    report = tools.convert(f"s3://zk-refs/python/{case.name}/refs.json", repository, storage_options=s3)
    assert report["containers"] == ["s3://zk-refs/"], report
    assert check(case, ReferenceStore(repository, storage_options=s3)) == []


def test_an_icechunk_repository_in_azure_round_trips(azure: dict[str, str]) -> None:
    """The same in azurite: a case in the container committed into a repository in the same
    container (`icechunk+az://zk-refs/PREFIX`, reached with the account's key), then opened back
    as references: every array reads the case's ground truth."""
    from zarrs_kerchunk import tools

    case = next(c for c in CASES if c.name == "nc4_deflate_shuffle")
    repository = f"icechunk+az://zk-refs/python-icechunk-{os.getpid()}"
    report = tools.convert(f"az://zk-refs/python/{case.name}/refs.json", repository, storage_options=azure)
    assert report["containers"] == ["az://zk-refs/"], report
    assert check(case, ReferenceStore(repository, storage_options=azure)) == []


def test_an_icechunk_repository_in_gcs_round_trips(gcs: dict[str, str]) -> None:
    """The same in fake-gcs-server: a case in the bucket committed into a repository in the same
    bucket (`icechunk+gs://zk-refs/PREFIX`, reached with the bucket's service account), then
    opened back as references: every array reads the case's ground truth."""
    from zarrs_kerchunk import tools

    case = next(c for c in CASES if c.name == "nc4_deflate_shuffle")
    repository = f"icechunk+gs://zk-refs/python-icechunk-{os.getpid()}"
    report = tools.convert(f"gs://zk-refs/python/{case.name}/refs.json", repository, storage_options=gcs)
    assert report["containers"] == ["gs://zk-refs/"], report
    assert check(case, ReferenceStore(repository, storage_options=gcs)) == []
