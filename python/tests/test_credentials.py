"""Temporary S3 credentials from a credentials endpoint as NASA's DAACs serve one (issue 54, in
part): `.ci/earthdata.py` hands out moto's temporary keys for a role that reads zk-data (moto
checks their session token), for a bearer token. The store's `credentials=` names the endpoint
and the variable holding the token; values against the conformance case's `.npy` (netCDF4's).

- a store reads the case with the endpoint's keys; so does one unpickled in another process,
  which reads the token from its own environment: the pickle holds the variable's name, never
  the token;
- with no token, `netrc=` logs in through Earthdata Login's redirects and gets the keys;
- a wrong token raises AccessDeniedError naming the endpoint, with no token in it."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
import zarr
from conftest import DATA, array_read_in_another_process, put_in_zk_data, server

from zarrs_kerchunk import AccessDeniedError, ReferenceStore

CASE = DATA / "netcdf3_classic"


@pytest.fixture(scope="module")
def zk_data() -> tuple[str, dict[str, str], str]:
    endpoint = server("ZK_S3CREDENTIALS")
    if endpoint is None:
        pytest.skip("no credentials endpoint: start the servers with .ci/servers.sh")
    folder = f"python-credentials-{os.getpid()}"
    with_keys = put_in_zk_data(CASE, folder)
    # S3 itself, without the user's keys: the endpoint's temporary keys sign every request.
    options = {key: value for key, value in with_keys.items()
               if key not in ("aws_access_key_id", "aws_secret_access_key")}
    return f"s3://zk-data/{folder}/refs.json", options, endpoint


def _credentials(endpoint: str) -> dict[str, dict[str, str]]:
    return {"s3://zk-data/": {"s3credentials": endpoint, "token_env": "ZK_TEST_TOKEN"}}


def test_a_bucket_read_with_the_endpoints_keys_also_in_another_process(zk_data, monkeypatch, tmp_path) -> None:
    refs, options, endpoint = zk_data
    token = os.environ["ZK_EARTHDATA_TOKEN"]
    monkeypatch.setenv("ZK_TEST_TOKEN", token)
    store = ReferenceStore(refs, storage_options=options, credentials=_credentials(endpoint))
    a = zarr.open_group(store, mode="r", zarr_format=2)["a"][:]
    np.testing.assert_array_equal(a, np.load(CASE / "expected" / "a.npy"))
    pickled = pickle.dumps(store)
    assert token.encode() not in pickled and b"ZK_TEST_TOKEN" in pickled
    read = array_read_in_another_process(pickled, "a", {**os.environ, "ZK_TEST_TOKEN": token}, tmp_path)
    np.testing.assert_array_equal(read, np.load(CASE / "expected" / "a.npy"))


def test_with_no_token_a_netrc_login_gets_the_keys(zk_data, monkeypatch, tmp_path) -> None:
    refs, options, endpoint = zk_data
    monkeypatch.delenv("ZK_TEST_TOKEN", raising=False)
    monkeypatch.delenv("EARTHDATA_TOKEN", raising=False)
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine 127.0.0.2 login {os.environ['ZK_EARTHDATA_USER']} "
                     f"password {os.environ['ZK_EARTHDATA_PASSWORD']}\n")
    store = ReferenceStore(refs, storage_options=options, credentials=_credentials(endpoint), netrc=str(netrc))
    a = zarr.open_group(store, mode="r", zarr_format=2)["a"][:]
    np.testing.assert_array_equal(a, np.load(CASE / "expected" / "a.npy"))


def test_a_wrong_token_is_an_error_naming_the_endpoint(zk_data, monkeypatch) -> None:
    refs, options, endpoint = zk_data
    monkeypatch.setenv("ZK_TEST_TOKEN", "not-the-token")
    with pytest.raises(AccessDeniedError, match="access denied") as raised:
        ReferenceStore(refs, storage_options=options, credentials=_credentials(endpoint))
    assert endpoint in str(raised.value) and "not-the-token" not in str(raised.value)
