"""HTTPS as NASA Earthdata serves it (issue 54), against the stand-ins of `.ci/earthdata.py`: a DAAC
(127.0.0.3) whose distribution of zk-data takes a bearer token or a login's cookie and redirects to
signed URLs (127.0.0.4), and Earthdata Login (127.0.0.2), which takes a `.netrc` login and
redirects back. Values against the conformance case's `.npy` (netCDF4's).

- `bearer_token=` and `token_hosts=`, `EARTHDATA_TOKEN`, `netrc=`, the xarray engine's
  `backend_kwargs` and `tools.scan` each read the case exactly;
- a store pickled with the token from `EARTHDATA_TOKEN` holds no token, and another process reads
  with its own variable;
- a header reaches its host only;
- no credentials raise AccessDeniedError naming the login host; no error shows a token."""

from __future__ import annotations

import json
import os
import pickle
import urllib.request

import numpy as np
import pytest
import xarray as xr
import zarr
from conftest import DATA, array_read_in_another_process, put_in_zk_data, server

from zarrs_kerchunk import AccessDeniedError, ReferenceStore, tools

CASE = DATA / "netcdf3_classic"
EXPECTED = CASE / "expected" / "a.npy"


@pytest.fixture(scope="module")
def daac() -> str:
    """The case's folder at the DAAC, put in zk-data with the bucket's own keys."""
    url = server("ZK_DAAC")
    if url is None:
        pytest.skip("no Earthdata stand-ins: start the servers with .ci/servers.sh")
    folder = f"python-earthdata-{os.getpid()}"
    put_in_zk_data(CASE, folder)
    return f"{url}/zk-data/{folder}"


@pytest.fixture
def no_credentials(monkeypatch, tmp_path) -> None:
    """No token and no `.netrc` but what a test gives."""
    monkeypatch.delenv("EARTHDATA_TOKEN", raising=False)
    monkeypatch.delenv("NETRC", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))


def _netrc(tmp_path) -> str:
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine 127.0.0.2 login {os.environ['ZK_EARTHDATA_USER']} "
                     f"password {os.environ['ZK_EARTHDATA_PASSWORD']}\n")
    return str(netrc)


def _a(store: ReferenceStore) -> np.ndarray:
    return zarr.open_group(store, mode="r", zarr_format=2)["a"][:]


def _seen(host: str, agent: str) -> list[dict]:
    with urllib.request.urlopen(f"{host}/__seen") as answer:
        requests = json.load(answer)
    return [r for r in requests if {k.lower(): v for k, v in r["headers"].items()}.get("user-agent") == agent]


def test_a_token_given_or_from_earthdata_token_reads_and_is_not_pickled(daac, no_credentials, monkeypatch,
                                                                         tmp_path) -> None:
    token = os.environ["ZK_EARTHDATA_TOKEN"]
    refs = f"{daac}/refs.json"
    given = ReferenceStore(refs, bearer_token=token, token_hosts=["127.0.0.3"])
    np.testing.assert_array_equal(_a(given), np.load(EXPECTED))
    monkeypatch.setenv("EARTHDATA_TOKEN", token)
    from_variable = ReferenceStore(refs, token_hosts=["127.0.0.3"], netrc=False)
    np.testing.assert_array_equal(_a(from_variable), np.load(EXPECTED))
    pickled = pickle.dumps(from_variable)
    assert token.encode() not in pickled
    read = array_read_in_another_process(pickled, "a", {**os.environ, "EARTHDATA_TOKEN": token}, tmp_path)
    np.testing.assert_array_equal(read, np.load(EXPECTED))


def test_a_netrc_login_reads_through_the_store_the_engine_and_scan(daac, no_credentials, tmp_path) -> None:
    netrc = _netrc(tmp_path)
    np.testing.assert_array_equal(_a(ReferenceStore(f"{daac}/refs.json", netrc=netrc)), np.load(EXPECTED))
    with xr.open_dataset(f"{daac}/refs.json", engine="zarrs_kerchunk", backend_kwargs={"netrc": netrc}) as ds:
        np.testing.assert_array_equal(ds["a"].values, np.load(EXPECTED))
    out = tmp_path / "scanned.json"
    tools.scan([f"{daac}/data.nc"], out, netrc=netrc)
    np.testing.assert_array_equal(_a(ReferenceStore(str(out), netrc=netrc)), np.load(EXPECTED))


def test_a_header_reaches_its_host_only(daac, no_credentials) -> None:
    agent, key = f"zk-python-{os.getpid()}", f"key-{os.getpid()}"
    store = ReferenceStore(f"{daac}/refs.json", bearer_token=os.environ["ZK_EARTHDATA_TOKEN"],
                           token_hosts=["127.0.0.3"], headers={"127.0.0.3": {"X-Api-Key": key}},
                           storage_options={"user_agent": agent})
    np.testing.assert_array_equal(_a(store), np.load(EXPECTED))
    assert any(key in json.dumps(r) for r in _seen(server("ZK_DAAC"), agent))
    elsewhere = _seen(server("ZK_SIGNED"), agent) + _seen(server("ZK_EARTHDATA_LOGIN"), agent)
    assert elsewhere and not any(key in json.dumps(r) for r in elsewhere)


def test_without_credentials_access_is_denied_naming_the_login_host(daac, no_credentials) -> None:
    with pytest.raises(AccessDeniedError, match="access denied by http://127.0.0.2:8787/oauth/authorize") as raised:
        ReferenceStore(f"{daac}/refs.json")
    assert "no token, header or .netrc login is given for 127.0.0.2" in str(raised.value)
    with pytest.raises(AccessDeniedError, match="127.0.0.3 refused what is given for it") as raised:
        ReferenceStore(f"{daac}/refs.json", bearer_token="not-the-token", token_hosts=["127.0.0.3"])
    assert "not-the-token" not in str(raised.value)
    with pytest.raises(TypeError, match="option bearer_token: expected a str, got int"):
        ReferenceStore(f"{daac}/refs.json", bearer_token=12345)
